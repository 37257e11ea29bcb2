/**
 * E-mail out, over SMTP through nodemailer. `SMTP_URL` (`smtp://host:port`, or `smtps://user:pass@…`)
 * names the server; without one there is no mailer, and what needs it answers 503.
 */
import nodemailer from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** How long one message may take to hand over before it counts as failed. */
const SEND_TIMEOUT_MS = 10_000;

export function createMailer(smtpUrl: string, from: string): Mailer | undefined {
  if (!smtpUrl) return undefined;
  const transport = nodemailer.createTransport(
    {
      url: smtpUrl,
      connectionTimeout: SEND_TIMEOUT_MS,
      greetingTimeout: SEND_TIMEOUT_MS,
      socketTimeout: SEND_TIMEOUT_MS,
    },
    { from },
  );
  return {
    async send(mail) {
      await transport.sendMail(mail);
    },
    close: () => transport.close(),
  };
}
