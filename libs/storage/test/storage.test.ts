import { freePort } from '@cs/devstack';
import { testStorageSettings } from '@cs/testkit';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ObjectStorage, storageMessages } from '../src';

const storage = new ObjectStorage(testStorageSettings());
afterAll(() => storage.destroy());

const key = () => `uploads/lib-test-${Date.now()}-${Math.random().toString(16).slice(2)}.txt`;

describe('ObjectStorage against the real S3 server', () => {
  it('when an object is put, then get returns its bytes, head its size and type, and delete removes it', async () => {
    const k = key();
    expect(await storage.putObject(k, 'round trip', 'text/plain')).toBe(k);

    expect((await storage.getObject(k)).toString()).toBe('round trip');
    expect(await storage.headObject(k)).toMatchObject({ size: 10, contentType: 'text/plain', metadata: {} });
    expect((await storage.headObject(k))?.lastModified).toBeInstanceOf(Date);
    await storage.deleteObject(k);
    expect(await storage.headObject(k)).toBeUndefined();
    await expect(storage.deleteObject(k)).resolves.toBeUndefined();
  });

  it('when the key does not exist (NoSuchKey), then get is a 404 HttpError', async () => {
    await expect(storage.getObject(key())).rejects.toMatchObject({ status: 404, message: storageMessages.notFound });
  });

  it('when the bucket does not exist (NoSuchBucket), then a 500 with a generic message and the cause kept', async () => {
    const missing = new ObjectStorage({ ...testStorageSettings(), bucket: 'bucket-that-is-not-there' });
    try {
      const err = await missing.getObject(key()).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 500, message: storageMessages.failed });
      expect((err as Error).cause).toMatchObject({ name: 'NoSuchBucket' });
      await expect(missing.headObject(key())).rejects.toMatchObject({ status: 500 });
    } finally {
      missing.destroy();
    }
  });

  it('when storage cannot be reached, then a 503', async () => {
    const away = new ObjectStorage({ ...testStorageSettings(), endpoint: `http://127.0.0.1:${await freePort()}` });
    try {
      await expect(away.getObject(key())).rejects.toMatchObject({ status: 503, message: storageMessages.unavailable });
    } finally {
      away.destroy();
    }
  });
});
