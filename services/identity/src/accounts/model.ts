/** The accounts collection, with its indexes. */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema, type Types } from 'mongoose';
import { strict } from '../schema-options';

export interface UserRecord {
  _id: Types.ObjectId;
  email: string;
  /**
   * The bcrypt hash; never selected unless asked for. None (null) for an account made by a sign-in
   * with a provider, or taken over by one (oidc): no password logs in to it until a reset sets one.
   */
  password?: string | null;
  /** Whether the owner proved the address is theirs (a link mailed to it, or a provider that vouched). */
  emailVerified?: boolean;
  /** The name others see (profiles.ts); none until the owner gives one. */
  displayName?: string | null;
  /**
   * Every write of the password is the next version, taken as a turn (`@cs/mongo` turns), so a
   * write conditional on the hash it checked holds on FerretDB too. Accounts from before: none (0).
   */
  version?: number;
  createdAt: Date;
  updatedAt: Date;
}

const userSchema = new Schema<UserRecord>(
  {
    email: { type: String, required: true, trim: true, lowercase: true, maxlength: 254 },
    password: { type: String, default: null, select: false },
    emailVerified: { type: Boolean, default: false },
    displayName: { type: String, default: null },
    version: { type: Number, default: 0 },
  },
  { ...strict, timestamps: true },
);

// One account per address, enforced by the database: concurrent registrations cannot both win.
userSchema.index({ email: 1 }, { unique: true });

export type UserModel = Model<UserRecord>;

export function userModel(connection: Connection): UserModel {
  return modelOf(connection, 'User', userSchema);
}
