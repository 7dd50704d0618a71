/** `npm run admin` (local/admin.ts) against the e2e runtime's data directory and DynamoDB Local. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './runtime.ts';

export interface AdminRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A runner of the admin command on that runtime's data. */
export function adminCommand(dataDir: string, dynamoEndpoint: string): (args: string[]) => Promise<AdminRun> {
  return (args) =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', join(REPO_ROOT, 'local/admin.ts'), ...args],
        {
          cwd: REPO_ROOT,
          timeout: 60_000,
          env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DYNAMODB_ENDPOINT: dynamoEndpoint, GATEHOUSE_LOG_LEVEL: 'SILENT' },
        },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
}
