import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';

export interface UserRecord {
  _id: import('mongoose').Types.ObjectId;
  email: string;
  /** The bcrypt hash; never selected unless asked for. */
  password: string;
  createdAt: Date;
  updatedAt: Date;
}

const userSchema = new Schema<UserRecord>(
  {
    email: { type: String, required: true, trim: true, lowercase: true, maxlength: 254 },
    password: { type: String, required: true, select: false },
  },
  { timestamps: true, strict: 'throw', versionKey: false },
);

// One account per address, enforced by the database: concurrent registrations cannot both win.
userSchema.index({ email: 1 }, { unique: true });

export type UserModel = Model<UserRecord>;

export function userModel(connection: Connection): UserModel {
  return (connection.models.User as UserModel | undefined) ?? connection.model<UserRecord>('User', userSchema);
}
