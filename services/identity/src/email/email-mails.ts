/**
 * The mails of verification and change of address: each one in text and in HTML. Only the links
 * carry a token, and a link opens the web client, which asks the person to press Confirm: opening
 * it (a mail scanner does) uses nothing up.
 */
import type { Mail } from '../password-reset/mailer';

/** A duration in words for a link's lifetime: hours when whole, else minutes. */
function lifetime(ttlMs: number): string {
  const hours = ttlMs / 3_600_000;
  if (Number.isInteger(hours)) return hours === 1 ? '1 hour' : `${hours} hours`;
  return `${Math.max(1, Math.round(ttlMs / 60_000))} minutes`;
}

/** To the account's address: the link that verifies it. */
export function verificationMail(to: string, link: string, ttlMs: number): Mail {
  const within = lifetime(ttlMs);
  return {
    to,
    subject: 'Verify your e-mail address',
    text: [
      'Please confirm that this address is yours.',
      `Open this link within ${within}, then press Confirm: ${link}`,
      'If you did not make an account with us, ignore this e-mail.',
    ].join('\n\n'),
    html: [
      '<p>Please confirm that this address is yours.</p>',
      `<p><a href="${link}">Verify the address</a> (the link works once, for ${within}).</p>`,
      '<p>If you did not make an account with us, ignore this e-mail.</p>',
    ].join('\n'),
  };
}

/** To the new address of a change: the link that confirms it. */
export function changeLinkMail(to: string, link: string, ttlMs: number): Mail {
  const within = lifetime(ttlMs);
  return {
    to,
    subject: 'Confirm your new e-mail address',
    text: [
      'Someone asked to move their account to this address.',
      `To confirm it is yours, open this link within ${within}, then press Confirm: ${link}`,
      'If it was not you, ignore this e-mail: nothing changes.',
    ].join('\n\n'),
    html: [
      '<p>Someone asked to move their account to this address.</p>',
      `<p><a href="${link}">Confirm the new address</a> (the link works once, for ${within}).</p>`,
      '<p>If it was not you, ignore this e-mail: nothing changes.</p>',
    ].join('\n'),
  };
}

/** To the old address of a change: a notice, with no link, so that a stolen session is noticed. */
export function changeNoticeMail(to: string): Mail {
  const lines = [
    'Someone signed in to the account with this address asked to change it to another one.',
    'The change takes effect once the new address is confirmed; from then on, log in with the new address.',
    'If it was not you, change your password now and end your other sessions.',
  ];
  return {
    to,
    subject: 'Your e-mail address is being changed',
    text: lines.join('\n\n'),
    html: lines.map((line) => `<p>${line}</p>`).join('\n'),
  };
}

/**
 * To a new address that has an account already: a notice, with no link. The person who asked may
 * own both accounts and wonder why no link came; anyone else learns nothing from the answer, which
 * is the same 202 either way.
 */
export function addressTakenMail(to: string): Mail {
  const lines = [
    'Someone asked to move another account to this address, but this address has an account already, so nothing changed.',
    'If it was you, log in with this address instead, or choose another address for the other account.',
    'If it was not you, ignore this e-mail.',
  ];
  return {
    to,
    subject: 'This address has an account already',
    text: lines.join('\n\n'),
    html: lines.map((line) => `<p>${line}</p>`).join('\n'),
  };
}
