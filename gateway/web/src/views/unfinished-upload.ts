/** Large uploads begun in this browser that did not finish, offered again on Notes. */
import type { UnfinishedUpload } from '@content-service/client';
import { api } from '../api';
import { formatBytes, h } from '../dom';
import { act, actions } from '../forms';

/**
 * A large upload begun here that a reload (or a closed tab) interrupted. The browser cannot read
 * the file again by itself: choosing it again resumes the upload where it stopped.
 */
export function unfinishedNotice(upload: UnfinishedUpload, alert: { show(message: string): void }): HTMLElement {
  const notice = h(
    'div',
    { class: 'notice unfinished-upload', role: 'status', 'data-upload-id': upload.uploadId },
    h(
      'p',
      { class: 'notice-text' },
      `The upload of “${upload.filename}” (${formatBytes(upload.size)}) did not finish. Choose the same file below to continue where it stopped.`,
    ),
  );
  notice.append(
    actions(
      h(
        'button',
        {
          type: 'button',
          onclick: () =>
            void act(notice, alert, async () => {
              await api.discardUpload(upload.uploadId);
              notice.remove();
            }),
        },
        `Discard the upload of ${upload.filename}`,
      ),
    ),
  );
  return notice;
}
