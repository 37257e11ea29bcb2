/**
 * `node prepare-bucket.js '<settings as JSON>'`: prepareBucket in a process of its own, for the
 * launcher. Loading the S3 client would add about 20 MB to a process that afterwards only waits.
 */
import { prepareBucket } from './bucket';

prepareBucket(JSON.parse(process.argv[2] ?? '{}')).catch((err: Error) => {
  console.error(`Could not prepare the bucket: ${err.message}`);
  process.exitCode = 1;
});
