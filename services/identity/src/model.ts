import { modelOf } from '@cs/mongo';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';

export interface UserRecord {
  _id: import('mongoose').Types.ObjectId;
  email: string;
  /** The bcrypt hash; never selected unless asked for. */
  password: string;
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
    password: { type: String, required: true, select: false },
    version: { type: Number, default: 0 },
  },
  { timestamps: true, strict: 'throw', versionKey: false },
);

// One account per address, enforced by the database: concurrent registrations cannot both win.
userSchema.index({ email: 1 }, { unique: true });

export type UserModel = Model<UserRecord>;

export function userModel(connection: Connection): UserModel {
  return modelOf(connection, 'User', userSchema);
}
