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

let current: Mailer = logMailer;

/** Replace the sender (a mail service in production, a recorder in tests); returns the previous one. */
export function useMailer(mailer: Mailer): Mailer {
  const prior = current;
  current = mailer;
  return prior;
}

export function sendAccountMail(mail: AccountMail): Promise<void> {
  return current(mail);
}
