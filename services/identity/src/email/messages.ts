/** What the e-mail routes answer when they refuse, in full sentences, as credentials.ts's messages are. */
export const emailMessages = {
  unavailable: 'E-mail is not available on this server: an address cannot be verified or changed',
  alreadyVerified: 'The address is verified already',
  invalidVerificationToken: 'Invalid or expired verification link: ask for a new one',
  invalidChangeToken: 'Invalid or expired link to change the address: ask for the change again',
  sameAddress: 'That is the account’s address already',
  addressTaken: 'That address now belongs to another account: the address was not changed',
  verificationFailed: 'E-mail verification failed',
  changeFailed: 'E-mail change failed',
  accepted: 'A link to confirm the new address is on its way to it, if it can be used',
  verificationSent: 'A link to verify the address is on its way',
} as const;
