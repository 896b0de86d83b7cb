import { createTransport } from 'nodemailer';
import type { Config } from '../../config';
import { logger } from '../../logger';

/** One message of the account system (a password reset link). */
export interface AccountMail {
  to: string;
  subject: string;
  text: string;
  /** What a program needs from it (the reset token and link). */
  data: Record<string, string>;
}

/** The pluggable email sender: production wires a real one with useMailer; the default writes to the log. */
export type Mailer = (mail: AccountMail) => Promise<void>;

export const logMailer: Mailer = async (mail) => {
  logger.info({ to: mail.to, subject: mail.subject, ...mail.data }, 'account email (written to the log: no sender is configured)');
};

/** Mail sent over SMTP (nodemailer) to the configured server. */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = createTransport(url);
  return async (mail) => {
    await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
  };
}

type MailConfig = Pick<Config, 'SMTP_URL' | 'MAIL_FROM' | 'development'> & Partial<Pick<Config, 'zeroSetup'>>;

/**
 * The sender a configuration gives: SMTP when SMTP_URL is set; otherwise the log (at info) in
 * development and zero-setup, where the operator reads it; elsewhere nothing (a reset link in a
 * production log is a credential in the log): null, and the reset request says mail is off.
 */
export function mailerFor(config: MailConfig): Mailer | null {
  if (config.SMTP_URL) return smtpMailer(config.SMTP_URL, config.MAIL_FROM);
  return config.development || config.zeroSetup ? logMailer : null;
}

/** Where account mail goes, as the start-up line says it. */
export function mailSaid(config: MailConfig): string {
  if (config.SMTP_URL) return `account mail over SMTP to ${new URL(config.SMTP_URL).host}`;
  if (config.development || config.zeroSetup) return 'account mail (reset links) written to this log at info, no SMTP_URL';
  return 'no account mail (no SMTP_URL): password reset answers that mail is not configured';
}

let current: Mailer | null | undefined;

/** Replace the sender (a mail service in production, a recorder in tests); returns the previous one. */
export function useMailer(mailer: Mailer | null): Mailer | null {
  const prior = current ?? null;
  current = mailer;
  return prior;
}

/** Whether a sender is in place (set with useMailer, or from configuration at start-up). */
export function mailerReady(): boolean {
  return !!current;
}

/** Sets the configured sender unless one was set already; says in one sentence when password reset is off. */
export function configureMailer(config: MailConfig): void {
  if (current !== undefined) return;
  current = mailerFor(config);
}

/** Sends through the sender in place; with none, the message is dropped (the answer stays the same, so nothing is revealed). */
export async function sendAccountMail(mail: AccountMail): Promise<void> {
  if (current === undefined) current = logMailer; // a process that never configured one (a script, a unit test)
  if (!current) {
    logger.warn({ subject: mail.subject }, 'account email not sent: no SMTP_URL is configured (password reset is disabled)');
    return;
  }
  await current(mail);
}
