// Every tool, once. Transports, the OpenAPI document and the function-calling export read this list.
import type { ToolDefinition } from './define.js';
import { readFile } from './read-file.js';
import { writeFile } from './write-file.js';
import { appendToFile } from './append-to-file.js';
import { replaceInFile } from './replace-in-file.js';
import { editFile } from './edit-file.js';
import { listDirectory } from './list-directory.js';
import { fileInfo } from './file-info.js';
import { createDirectory } from './create-directory.js';
import { deleteFile } from './delete-file.js';
import { moveFile } from './move-file.js';
import { findLargeFiles } from './find-large-files.js';
import { diskUsage } from './disk-usage.js';
import { searchFiles } from './search-files.js';
import { listBackups } from './list-backups.js';
import { restoreBackup } from './restore-backup.js';
import { readDocx } from './documents/read-docx.js';
import { readExcel } from './documents/read-excel.js';
import { shellReadonly } from './shell/shell-readonly.js';
import { shellWrite } from './shell/shell-write.js';
import { shellDestructive } from './shell/shell-destructive.js';
import { webFetch } from './web-fetch.js';
import { webSearch } from './web-search.js';
import { timeNow } from './time-now.js';
import { applyPatch } from './apply-patch.js';
import { textEditor } from './text-editor.js';
import { readMultipleFiles } from './read-multiple-files.js';
import { runCommand } from './run-command.js';
import { listCheckpoints } from './list-checkpoints.js';
import { rewind } from './rewind.js';

// One entry per line, in the order tools are listed (GET /v1/tools, OpenAPI). The order is also the tour
// the OpenAPI examples take: run in this order on a fresh workspace, each example succeeds (write_file's
// first creates notes.txt, the edits change it in turn, the move and removal come last). run_command is
// off by default (TOOLGATE_EXEC): its example runs where an operator turned it on.
const ALL = [
  writeFile,
  readFile,
  readMultipleFiles,
  fileInfo,
  listDirectory,
  searchFiles,
  editFile,
  replaceInFile,
  textEditor,
  applyPatch,
  appendToFile,
  listBackups,
  restoreBackup,
  listCheckpoints,
  rewind,
  createDirectory,
  moveFile,
  deleteFile,
  findLargeFiles,
  diskUsage,
  readDocx,
  readExcel,
  shellReadonly,
  shellWrite,
  shellDestructive,
  webFetch,
  webSearch,
  timeNow,
  runCommand,
];

export const TOOLS: readonly ToolDefinition[] = ALL as unknown as ToolDefinition[];

const byName = new Map<string, ToolDefinition>();
for (const tool of TOOLS) {
  for (const name of [tool.name, ...(tool.aliases ?? [])]) {
    if (byName.has(name)) throw new Error(`Duplicate tool name or alias: ${name}`);
    byName.set(name, tool);
  }
}

/** The tool a name or alias refers to. */
export function findTool(name: string): ToolDefinition | undefined {
  return byName.get(name);
}
