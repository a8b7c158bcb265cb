// Generated from openapi.yaml by `npm run client` (openapi-typescript); do not edit.

export interface paths {
    "/v1/tools/write_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a file or overwrite it with the complete new content
         * @description Create a file or overwrite it with the complete new content. Overwriting an existing file needs the version you read (expected_sha256 or expected_mtime_ms + expected_size_bytes). Returns a diff preview; dry_run previews without writing.
         *
         *     Risk: write (high). Aliases: write, Write, file-write.
         */
        post: operations["write_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/read_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Read a text file, or a range of its lines
         * @description Read a text file, or a range of its lines. Returns the content and the version to pass back when you change the file. Large files must be read by line range (start_line/end_line, or view_range) or from the end (tail: N); output is capped and `next_start_line` tells where to continue. Images, PDF and other media come back as base64 with media_type.
         *
         *     Risk: read (low). Aliases: read, file-read.
         */
        post: operations["read_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/read_multiple_files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Read several text files
         * @description Read several text files (up to 50) in one call; each path gets its own answer or error, so one missing file does not fail the others. The total output is capped like read_file's; read a large file alone.
         *
         *     Risk: read (low).
         */
        post: operations["read_multiple_files"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/file_info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Facts about a file or directory without reading it out
         * @description Facts about a file or directory without reading it out: type, size, mode, mtime, symlink flag, line count of a text file, and its version (sha256).
         *
         *     Risk: read (low).
         */
        post: operations["file_info"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/list_directory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the entries of a directory
         * @description List the entries of a directory (depth 1), or a tree up to `depth` levels, with type, size and mtime. Directories come first. Hidden entries need include_hidden; .git and node_modules are listed but not entered.
         *
         *     Risk: read (low). Aliases: file-list.
         */
        post: operations["list_directory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/search_files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Search file names and/or file contents under a directory
         * @description Search file names and/or file contents under a directory, breadth-first: literal text by default (case-insensitive unless case_sensitive), or a regular expression with regex: true. Skips .git, node_modules, .gitignore'd paths, binary files and files over the read limit. Content results give path, line, column and a preview line.
         *
         *     Risk: read (low). Aliases: file-search.
         */
        post: operations["search_files"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/edit_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace text in a file
         * @description Replace text in a file. old_text must match one place (exactly, or tolerating line endings, trailing spaces, indentation and quote style); the replacement is re-indented to the file and keeps its line endings. Several matches is MULTIPLE_MATCHES (add context or set replace_all); no match names the closest region. edits[] applies several edits all or nothing.
         *
         *     Risk: write (high). Aliases: edit.
         */
        post: operations["edit_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/replace_in_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Find and replace in one file
         * @description Find and replace in one file: exact text by default, or a regular expression with regex: true (time-limited). count limits the replacements. No match is not an error (replacements: 0). Returns a diff preview; dry_run previews without writing. For one precise edit with whitespace tolerance prefer edit_file.
         *
         *     Risk: write (high).
         */
        post: operations["replace_in_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/str_replace_based_edit_tool": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Anthropic's text editor tool
         * @description Anthropic's text editor tool. view: a file `cat -n` style (view_range [start, end], -1 = end) or a directory two levels deep; create: a new file (file_text); str_replace: replace old_str, which must match one place, with new_str; insert: new_str after line insert_line (0 = top); undo_edit: undo your last change to the file.
         *
         *     Risk: write (high). Aliases: text_editor.
         */
        post: operations["str_replace_based_edit_tool"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/apply_patch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Apply a V4A patch
         * @description Apply a V4A patch (OpenAI's apply_patch format) to one or more files: add, update (with context-matched hunks, optionally moving the file) or delete. The whole patch applies or nothing does; a hunk whose context fits more than one place needs an '@@ `<line above it>`' header. Returns one diff per file. Also accepts one Responses API operation ({type, path, diff}).
         *
         *     Risk: destructive (high).
         */
        post: operations["apply_patch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/append_to_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Append text to the end of an existing file
         * @description Append text to the end of an existing file (it must exist; use write_file to create one). Keeps the file mode and CRLF line endings; the old content is backed up. dry_run previews the diff without writing.
         *
         *     Risk: write (medium).
         */
        post: operations["append_to_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/list_backups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the backups kept before files were overwritten
         * @description List the backups kept before files were overwritten, edited, replaced or deleted (newest first). Pass a backup_id to restore_backup to undo a change.
         *
         *     Risk: read (low).
         */
        post: operations["list_backups"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/restore_backup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Undo a change: put a backup back in place at its original path
         * @description Undo a change: put a backup back in place at its original path. The content it replaces is itself backed up; pass the current version (expected_*) to guard against overwriting newer work.
         *
         *     Risk: write (high).
         */
        post: operations["restore_backup"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/list_checkpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the project's checkpoints
         * @description List the project's checkpoints, newest first: one per agent turn (the turn a call names: REST Toolgate-Turn, WebSocket turn, MCP _meta toolgate/turn) and one per call without a turn, each with the files it created, changed, removed or moved. rewind takes the project back to just before one.
         *
         *     Risk: read (low).
         */
        post: operations["list_checkpoints"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/rewind": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Take back agent turns
         * @description Take back agent turns: put every file changed at or after a checkpoint (list_checkpoints) back as it was just before it — changed files restored, created ones removed, removed ones restored, moves undone — by every tool and command. dry_run answers the changes with diffs and changes nothing. A file changed since its last recorded change stops it with CONFLICT unless force. The rewind is a checkpoint itself, so it can be taken back too.
         *
         *     Risk: destructive (high).
         */
        post: operations["rewind"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/create_directory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a directory, with its missing parents unless parents is false
         * @description Create a directory, with its missing parents unless parents is false. An existing directory is not an error.
         *
         *     Risk: write (medium).
         */
        post: operations["create_directory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/move_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Move or rename a file or directory inside the workspace
         * @description Move or rename a file or directory inside the workspace. An existing destination file is replaced only with overwrite: true (and backed up); a directory is never overwritten. Pass the version of the source you read to guard the move.
         *
         *     Risk: write (high).
         */
        post: operations["move_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/delete_file": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Delete one file (never a directory)
         * @description Delete one file (never a directory). The file is moved into the backups first, so restore_backup can undo it. Pass the version you read to make sure you delete what you saw; dry_run only checks.
         *
         *     Risk: destructive (high). Aliases: file-delete.
         */
        post: operations["delete_file"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/find_large_files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Find the largest files under a directory
         * @description Find the largest files under a directory (default: the workspace), at least min_size_bytes, largest first. Also looks inside .git and node_modules.
         *
         *     Risk: read (low).
         */
        post: operations["find_large_files"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/disk_usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Bytes and number of files under a path
         * @description Bytes and number of files under a path (default: the whole workspace, .git and node_modules included), and the free and total space of its volume.
         *
         *     Risk: read (low).
         */
        post: operations["disk_usage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/read_docx": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Read a Word .docx document as Markdown
         * @description Read a Word .docx document as Markdown (headings, lists, tables, emphasis). Embedded images come back as attachments {id, name, media_type, bytes}, fetched with GET /v1/attachments/{id}. Output is capped (`truncated`). Hostile or damaged files are refused with an error.
         *
         *     Risk: read (low). Aliases: file-read-docx.
         */
        post: operations["read_docx"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/read_excel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Read an Excel .xlsx/.xlsm workbook as one Markdown table per sheet
         * @description Read an Excel .xlsx/.xlsm workbook as one Markdown table per sheet (cached values of formulas; formulas too with formulas: true). Ask for one sheet or a range for large workbooks; output is capped (`truncated`, `truncated_at`). Images come back as attachments fetched with GET /v1/attachments/{id}. Legacy .xls is refused.
         *
         *     Risk: read (low). Aliases: file-read-excel.
         */
        post: operations["read_excel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/shell_readonly": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a read-only command
         * @description Run a read-only command: date (-u, -I, -Iseconds, -R), pwd (the project root, shown as "/"), ls (-l -a -A -1 -h -R -t -S -r; paths inside the project). No shell runs and nothing is spawned: shell syntax (pipes, redirections, ;, &&, $, backticks, globs) is refused. Output is capped.
         *
         *     Risk: read (low). Aliases: shell-readonly.
         */
        post: operations["shell_readonly"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/shell_write": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run `mkdir [-p] <path>` inside the project
         * @description Run `mkdir [-p] <path>` inside the project, exactly as create_directory (sandboxed, audited). No shell runs: shell syntax (pipes, redirections, ;, &&, $, backticks, globs) is refused.
         *
         *     Risk: write (medium). Aliases: shell-write.
         */
        post: operations["shell_write"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/shell_destructive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run `rm [-f] <file>` inside the project
         * @description Run `rm [-f] <file>` inside the project, exactly as delete_file: one regular file, backed up first (restore_backup undoes it); directories and -r are refused. No shell runs: shell syntax (pipes, redirections, ;, &&, $, backticks, globs) is refused.
         *
         *     Risk: destructive (high). Aliases: shell-destructive.
         */
        post: operations["shell_destructive"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/web_fetch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Fetch a web page or document over http(s)
         * @description Fetch a web page or document over http(s): HTML is returned as readable Markdown (main content, links absolute), JSON and text as they are; other types are refused. Private, loopback, link-local and cloud-metadata addresses are refused unless the operator allows them.
         *
         *     Risk: read (low). Aliases: web-fetch.
         */
        post: operations["web_fetch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/web_search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Search the web through the operator's provider
         * @description Search the web through the operator's provider: results of {title, url, snippet}. With the default provider (DuckDuckGo's Instant Answer API) results are an abstract and related topics, not a full result list.
         *
         *     Risk: read (low). Aliases: web-search.
         */
        post: operations["web_search"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/time_now": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The server's current time as ISO 8601 with the zone's offset
         * @description The server's current time as ISO 8601 with the zone's offset, in the server's zone or an IANA time zone you name.
         *
         *     Risk: read (low). Aliases: time-now.
         */
        post: operations["time_now"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/run_command": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a command
         * @description Run a command (tests, a linter, a build, a script) in a sandbox: the project is at /workspace (read-write, nothing else is writable but a fresh /tmp), no network unless the operator allows it (and then never the service host), an empty environment plus PATH, HOME=/tmp, LANG and your env, limited time, CPU, memory, processes and file size. Answers exit_code, stdout and stderr (head and tail kept when long), and files_changed: what the command created, changed or removed in the project.
         *
         *     Risk: execute (high).
         */
        post: operations["run_command"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the tools
         * @description The tools this caller may use (its token's risks and the policy, with the switches of X-Toolgate-Switches): name, description (which says where a tool asks for approval), risk, aliases and the input JSON Schema; `format=openai|openai-responses|anthropic|mcp` returns ready-to-register function definitions (the OpenAI ones `strict: true` where their schema holds strict mode's rules).
         */
        get: {
            parameters: {
                query?: {
                    format?: "toolgate" | "openai" | "openai-responses" | "anthropic" | "mcp";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The tools this caller may use. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ToolList"] | {
                            [key: string]: unknown;
                        }[] | {
                            tools: {
                                [key: string]: unknown;
                            }[];
                        };
                    };
                };
                /** @description error envelope */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/approvals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List approval requests
         * @description Requests this caller may see (a token with `approve`: all of its projects; any other token: its own), oldest first.
         */
        get: {
            parameters: {
                query?: {
                    status?: "pending" | "approved" | "rejected" | "expired" | "used";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            approvals: components["schemas"]["Approval"][];
                        };
                    };
                };
                /** @description error envelope */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/approvals/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one approval request */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            approval: components["schemas"]["Approval"];
                        };
                    };
                };
                /** @description error envelope */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/approvals/{id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a request
         * @description Needs a token with the `approve` risk class (without tokens: a loopback caller); a token decides its own request only when marked `self_approve`. Deciding twice is CONFLICT, an expired request APPROVAL_EXPIRED.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Why; a rejection reason reaches the model. */
                        reason?: string;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            approval: components["schemas"]["Approval"];
                        };
                    };
                };
                /** @description error envelope */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/approvals/{id}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reject a request
         * @description Needs a token with the `approve` risk class (without tokens: a loopback caller); a token decides its own request only when marked `self_approve`. Deciding twice is CONFLICT, an expired request APPROVAL_EXPIRED.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Why; a rejection reason reaches the model. */
                        reason?: string;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            approval: components["schemas"]["Approval"];
                        };
                    };
                };
                /** @description error envelope */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/attachments/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch an attachment
         * @description The bytes of an attachment (an image read_docx or read_excel extracted), for the caller and project that read the document, until it expires (TOOLGATE_ATTACHMENT_RETENTION_S).
         */
        get: operations["get_attachment"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        EnvelopeContextInput: {
            /** @constant */
            cwd: ".";
            project: string | null;
            params_input: unknown;
            path_resolved: string | null;
            /** @enum {string} */
            risk: "read" | "write" | "destructive" | "execute";
            /** @enum {string} */
            risk_level: "low" | "medium" | "high";
            request_id: string;
        };
        EnvelopeErrorInput: {
            /** @enum {string} */
            code: "INVALID_PARAM" | "INVALID_REGEX" | "UNAUTHORIZED" | "ACCESS_DENIED" | "PERMISSION_DENIED" | "USER_REJECTED" | "NOT_FOUND" | "PARENT_NOT_FOUND" | "IS_DIRECTORY" | "NOT_A_DIRECTORY" | "NOT_REGULAR_FILE" | "ALREADY_EXISTS" | "CONFLICT" | "FILE_TOO_LARGE" | "NO_MATCH" | "HOST_NOT_FOUND" | "MULTIPLE_MATCHES" | "NO_CHANGE" | "ENCODING_ERROR" | "BINARY_FILE" | "LOCKED" | "VERSION_REQUIRED" | "RATE_LIMITED" | "APPROVAL_REQUIRED" | "APPROVAL_EXPIRED" | "EXECUTION_ERROR" | "NETWORK_ERROR" | "TIMEOUT" | "DISK_FULL";
            message: string;
            details?: {
                [key: string]: unknown;
            };
        };
        ErrorEnvelopeInput: {
            /** @constant */
            status: "error";
            data: null;
            text: string;
            stats: {
                [key: string]: number;
            };
            context: components["schemas"]["EnvelopeContextInput"];
            error: components["schemas"]["EnvelopeErrorInput"];
        };
        ApprovalRequestInput: {
            id: string;
            /** @description pending until a person decides. */
            status: string;
            expires_at: string;
            tool: string;
            path: string | null;
            /** @enum {string} */
            risk: "read" | "write" | "destructive" | "execute";
            /** @enum {string} */
            risk_level: "low" | "medium" | "high";
            summary: string;
            diff_preview: string;
            diff_truncated: boolean;
        };
        PendingApprovalEnvelopeInput: {
            /** @constant */
            status: "partial";
            data: ({
                /** @constant */
                applied: false;
                approval: components["schemas"]["ApprovalRequestInput"];
            } & {
                [key: string]: unknown;
            }) | null;
            text: string;
            stats: {
                [key: string]: number;
            };
            context: components["schemas"]["EnvelopeContextInput"];
            error?: unknown;
        };
        /** @description Version of the file: pass it back as expected_* (or If-Match: "`<sha256>`") to guard a change. */
        VersionInput: {
            mtime_ms: number;
            size_bytes: number;
            /** @description null only for files read by line range above the whole-read limit */
            sha256: string | null;
        };
        ApprovalChangeInput: {
            /** @description The path changed; for a move or copy its source. */
            path: string;
            /** @enum {string} */
            op: "create" | "update" | "delete" | "move" | "copy";
            /** @enum {string} */
            kind: "file" | "directory";
            /** @description Move or copy: the source. */
            from?: string;
            /** @description Move or copy: the destination. */
            to?: string;
            /** @description Unified diff of the content change ('' when the content stays as it is), cut at 100 lines or 10 KiB. */
            diff: string;
            /** @description A delete: the content that goes (cut like a diff); a directory moved: the entries it holds, one per line; null otherwise. */
            content: string | null;
            /** @description diff or content was cut. */
            truncated: boolean;
            lines_added: number;
            lines_removed: number;
            /** @description sha256 of the file before (null: new, or a directory). */
            sha256_before: string | null;
            /** @description sha256 of the file the change leaves (null: a delete, or a directory). */
            sha256_after: string | null;
        };
        AttachmentInput: {
            /** @description Fetch the bytes with GET /v1/attachments/{id} (same token and project; expires after TOOLGATE_ATTACHMENT_RETENTION_S). */
            id: string;
            name: string;
            media_type: string;
            /** @description Size in bytes. */
            bytes: number;
        };
        ApprovalInput: {
            id: string;
            /** @enum {string} */
            status: "pending" | "approved" | "rejected" | "expired" | "used";
            /** @description Token id that asked (null without auth). */
            caller: string | null;
            project: string | null;
            tool: string;
            path: string | null;
            /** @enum {string} */
            risk: "read" | "write" | "destructive" | "execute";
            /** @enum {string} */
            risk_level: "low" | "medium" | "high";
            args_hash: string;
            file_version: components["schemas"]["VersionInput"] | null;
            summary: string;
            diff_preview: string;
            diff_truncated: boolean;
            /** @description Every change the call makes, each with its operation and diff (a delete: the content that goes); diff_preview is their concatenation. */
            changes: components["schemas"]["ApprovalChangeInput"][];
            /** @description What the approval binds to: the repeat must plan these very changes, else CONFLICT. null for a call that changes no file. */
            changes_hash: string | null;
            rule: {
                index: number;
                name?: string;
            } | null;
            ttl_ms: number;
            created_at: string;
            expires_at: string;
            decided_at: string | null;
            decided_by: string | null;
            reason: string | null;
            used_at: string | null;
        };
        /** @description format=toolgate (the default). */
        ToolListInput: {
            tools: {
                name: string;
                description: string;
                /** @enum {string} */
                risk: "read" | "write" | "destructive" | "execute";
                /** @enum {string} */
                risk_level: "low" | "medium" | "high";
                aliases: string[];
                param_aliases: {
                    [key: string]: string;
                };
                /** @description JSON Schema of the arguments. */
                input_schema: {
                    [key: string]: unknown;
                };
            }[];
        };
        EnvelopeContext: {
            /** @constant */
            cwd: ".";
            project: string | null;
            params_input: unknown;
            path_resolved: string | null;
            /** @enum {string} */
            risk: "read" | "write" | "destructive" | "execute";
            /** @enum {string} */
            risk_level: "low" | "medium" | "high";
            request_id: string;
        };
        EnvelopeError: {
            /** @enum {string} */
            code: "INVALID_PARAM" | "INVALID_REGEX" | "UNAUTHORIZED" | "ACCESS_DENIED" | "PERMISSION_DENIED" | "USER_REJECTED" | "NOT_FOUND" | "PARENT_NOT_FOUND" | "IS_DIRECTORY" | "NOT_A_DIRECTORY" | "NOT_REGULAR_FILE" | "ALREADY_EXISTS" | "CONFLICT" | "FILE_TOO_LARGE" | "NO_MATCH" | "HOST_NOT_FOUND" | "MULTIPLE_MATCHES" | "NO_CHANGE" | "ENCODING_ERROR" | "BINARY_FILE" | "LOCKED" | "VERSION_REQUIRED" | "RATE_LIMITED" | "APPROVAL_REQUIRED" | "APPROVAL_EXPIRED" | "EXECUTION_ERROR" | "NETWORK_ERROR" | "TIMEOUT" | "DISK_FULL";
            message: string;
            details?: {
                [key: string]: unknown;
            };
        };
        ErrorEnvelope: {
            /** @constant */
            status: "error";
            data: null;
            text: string;
            stats: {
                [key: string]: number;
            };
            context: components["schemas"]["EnvelopeContext"];
            error: components["schemas"]["EnvelopeError"];
        };
        ApprovalRequest: {
            id: string;
            /** @description pending until a person decides. */
            status: string;
            expires_at: string;
            tool: string;
            path: string | null;
            /** @enum {string} */
            risk: "read" | "write" | "destructive" | "execute";
            /** @enum {string} */
            risk_level: "low" | "medium" | "high";
            summary: string;
            diff_preview: string;
            diff_truncated: boolean;
        };
        PendingApprovalEnvelope: {
            /** @constant */
            status: "partial";
            data: ({
                /** @constant */
                applied: false;
                approval: components["schemas"]["ApprovalRequest"];
            } & {
                [key: string]: unknown;
            }) | null;
            text: string;
            stats: {
                [key: string]: number;
            };
            context: components["schemas"]["EnvelopeContext"];
            error?: unknown;
        };
        /** @description Version of the file: pass it back as expected_* (or If-Match: "`<sha256>`") to guard a change. */
        Version: {
            mtime_ms: number;
            size_bytes: number;
            /** @description null only for files read by line range above the whole-read limit */
            sha256: string | null;
        };
        ApprovalChange: {
            /** @description The path changed; for a move or copy its source. */
            path: string;
            /** @enum {string} */
            op: "create" | "update" | "delete" | "move" | "copy";
            /** @enum {string} */
            kind: "file" | "directory";
            /** @description Move or copy: the source. */
            from?: string;
            /** @description Move or copy: the destination. */
            to?: string;
            /** @description Unified diff of the content change ('' when the content stays as it is), cut at 100 lines or 10 KiB. */
            diff: string;
            /** @description A delete: the content that goes (cut like a diff); a directory moved: the entries it holds, one per line; null otherwise. */
            content: string | null;
            /** @description diff or content was cut. */
            truncated: boolean;
            lines_added: number;
            lines_removed: number;
            /** @description sha256 of the file before (null: new, or a directory). */
            sha256_before: string | null;
            /** @description sha256 of the file the change leaves (null: a delete, or a directory). */
            sha256_after: string | null;
        };
        Attachment: {
            /** @description Fetch the bytes with GET /v1/attachments/{id} (same token and project; expires after TOOLGATE_ATTACHMENT_RETENTION_S). */
            id: string;
            name: string;
            media_type: string;
            /** @description Size in bytes. */
            bytes: number;
        };
        Approval: {
            id: string;
            /** @enum {string} */
            status: "pending" | "approved" | "rejected" | "expired" | "used";
            /** @description Token id that asked (null without auth). */
            caller: string | null;
            project: string | null;
            tool: string;
            path: string | null;
            /** @enum {string} */
            risk: "read" | "write" | "destructive" | "execute";
            /** @enum {string} */
            risk_level: "low" | "medium" | "high";
            args_hash: string;
            file_version: components["schemas"]["Version"] | null;
            summary: string;
            diff_preview: string;
            diff_truncated: boolean;
            /** @description Every change the call makes, each with its operation and diff (a delete: the content that goes); diff_preview is their concatenation. */
            changes: components["schemas"]["ApprovalChange"][];
            /** @description What the approval binds to: the repeat must plan these very changes, else CONFLICT. null for a call that changes no file. */
            changes_hash: string | null;
            rule: {
                index: number;
                name?: string;
            } | null;
            ttl_ms: number;
            created_at: string;
            expires_at: string;
            decided_at: string | null;
            decided_by: string | null;
            reason: string | null;
            used_at: string | null;
        };
        /** @description format=toolgate (the default). */
        ToolList: {
            tools: {
                name: string;
                description: string;
                /** @enum {string} */
                risk: "read" | "write" | "destructive" | "execute";
                /** @enum {string} */
                risk_level: "low" | "medium" | "high";
                aliases: string[];
                param_aliases: {
                    [key: string]: string;
                };
                /** @description JSON Schema of the arguments. */
                input_schema: {
                    [key: string]: unknown;
                };
            }[];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    write_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /** @description The complete new content of the file. */
                    content: string;
                    /** @description utf-8 (default), any iconv-lite encoding, or base64 (content is base64 of the bytes). */
                    encoding?: string;
                    /**
                     * @description Create missing parent directories.
                     * @default true
                     */
                    create_dirs?: boolean;
                    /**
                     * @description Keep the old content as a backup (see list_backups).
                     * @default true
                     */
                    backup?: boolean;
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /**
                     * @description Allow replacing a non-empty file with empty content.
                     * @default false
                     */
                    allow_empty?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            applied: boolean;
                            /** @enum {string} */
                            operation: "create" | "update";
                            /** @description Unified diff, cut at 100 lines or 10 KiB. */
                            diff_preview: string;
                            diff_truncated: boolean;
                            /** @description Lines added by the whole change (exact even when the preview is cut). */
                            lines_added: number;
                            lines_removed: number;
                            backup_id: string | null;
                            created_directory: string | null;
                            /** @description null on a dry run of a new file */
                            version: components["schemas"]["Version"] | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    read_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt"
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /** @description utf-8 (default), any iconv-lite encoding (latin1, windows-1251, shift_jis, utf-16le…), or base64 for binary files. */
                    encoding?: string;
                    /** @description First line to read (1-based, inclusive); negative counts from the end (-100 = the last 100 lines, as tail). */
                    start_line?: number;
                    /** @description Last line to read (1-based, inclusive). */
                    end_line?: number;
                    /** @description [start_line, end_line] in one argument; -1 as end_line reads to the end. */
                    view_range?: number[];
                    /** @description Read the last N lines, found from the end of the file (as fast on a huge file as reading its first lines). */
                    tail?: number;
                    /**
                     * @description Prefix every line with its number and a tab.
                     * @default false
                     */
                    line_numbers?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            content: string;
                            encoding: string;
                            /** @description null when the file was read by range and not scanned to its end */
                            total_lines: number | null;
                            start_line: number;
                            end_line: number;
                            truncated: boolean;
                            /** @description Pass as start_line to continue after a truncated read. */
                            next_start_line: number | null;
                            bom: boolean;
                            /** @description Set for images, PDF, audio and video (by magic bytes): content is then base64 of the bytes. */
                            media_type?: string;
                            version: components["schemas"]["Version"];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    read_multiple_files: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "paths": [
                 *         "notes.txt"
                 *       ],
                 *       "line_numbers": true
                 *     }
                 */
                "application/json": {
                    /** @description Paths relative to the workspace root (at most 50). */
                    paths: string[];
                    /**
                     * @description Prefix every line with its number and a tab.
                     * @default false
                     */
                    line_numbers?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description One answer per path, in the order asked. */
                            files: {
                                /** @description The path read (relative); null for a path refused as absolute or outside the workspace, which is never echoed. */
                                path: string | null;
                                /**
                                 * @description partial: the file was cut at the output cap (read the rest with read_file).
                                 * @enum {string}
                                 */
                                status: "success" | "partial" | "error";
                                /** @description read_file's data for this file; null on error. */
                                data: {
                                    content: string;
                                    encoding: string;
                                    /** @description null when the file was read by range and not scanned to its end */
                                    total_lines: number | null;
                                    start_line: number;
                                    end_line: number;
                                    truncated: boolean;
                                    /** @description Pass as start_line to continue after a truncated read. */
                                    next_start_line: number | null;
                                    bom: boolean;
                                    /** @description Set for images, PDF, audio and video (by magic bytes): content is then base64 of the bytes. */
                                    media_type?: string;
                                    version: components["schemas"]["Version"];
                                } | null;
                                text: string;
                                error: {
                                    code: string;
                                    message: string;
                                } | null;
                            }[];
                            /** @description The total output cap (TOOLGATE_MAX_OUTPUT_BYTES) was reached: the files after it were not read. */
                            truncated: boolean;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    file_info: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt"
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            path: string;
                            /** @enum {string} */
                            type: "file" | "directory" | "other";
                            size: number;
                            /** @description Permission bits in octal, e.g. '0644'. */
                            mode: string;
                            mtime_ms: number;
                            /** @description The name given is (or passes through) a symbolic link inside the workspace. */
                            is_symlink: boolean;
                            /** @description Where the symbolic link leads (relative to the workspace root), else null. */
                            target: string | null;
                            /** @description null when not a regular file or over TOOLGATE_MAX_READ_BYTES. */
                            is_binary: boolean | null;
                            /** @description Lines of a text file up to TOOLGATE_MAX_READ_BYTES, else null. */
                            line_count: number | null;
                            /** @description Regular files only; sha256 is null above TOOLGATE_MAX_READ_BYTES. */
                            version: components["schemas"]["Version"] | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    list_directory: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": ".",
                 *       "depth": 2
                 *     }
                 */
                "application/json": {
                    /**
                     * @description Directory relative to the workspace root; "." is the root.
                     * @default .
                     */
                    path?: string;
                    /**
                     * @description Levels to list: 1 = the directory's own entries (max 10).
                     * @default 1
                     */
                    depth?: number;
                    /**
                     * @description Include names starting with a dot.
                     * @default false
                     */
                    include_hidden?: boolean;
                    /**
                     * @description Most entries returned (breadth-first: shallow entries first).
                     * @default 1000
                     */
                    limit?: number;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description Directories first, then by path. */
                            entries: {
                                name: string;
                                /** @description Relative to the workspace root. */
                                path: string;
                                /**
                                 * @description Symlinks are listed, never followed.
                                 * @enum {string}
                                 */
                                type: "file" | "directory" | "symlink" | "other";
                                size: number;
                                mtime_ms: number;
                            }[];
                            /** @description Stopped at limit, at TOOLGATE_SEARCH_MAX_FILES or at the time limit. */
                            truncated: boolean;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    search_files: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "query": "hello",
                 *       "mode": "content"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description Directory relative to the workspace root; "." is the root.
                     * @default .
                     */
                    path?: string;
                    /** @description Text to look for (in names and/or contents); a JavaScript regular expression with regex: true. */
                    query: string;
                    /**
                     * @description Match file and directory names, file contents, or both.
                     * @default both
                     * @enum {string}
                     */
                    mode?: "name" | "content" | "both";
                    /** @description Only files whose path (relative to `path`) matches, e.g. "*.ts" (any directory) or "src/**\/*.md". */
                    glob?: string;
                    /**
                     * @description Treat query as a regular expression (flag m: ^ and $ match at line boundaries). Runs under a time limit.
                     * @default false
                     */
                    regex?: boolean;
                    /** @default false */
                    case_sensitive?: boolean;
                    /**
                     * @description Deepest level searched below `path` (1 = its own entries).
                     * @default 12
                     */
                    max_depth?: number;
                    /**
                     * @description Most results returned.
                     * @default 100
                     */
                    limit?: number;
                    /**
                     * @description Skip what .gitignore files ignore.
                     * @default true
                     */
                    respect_gitignore?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description Breadth-first order; one content result per matching line. */
                            results: ({
                                /** @enum {string} */
                                type: "name";
                                path: string;
                                /** @enum {string} */
                                kind: "file" | "directory" | "symlink" | "other";
                            } | {
                                /** @enum {string} */
                                type: "content";
                                path: string;
                                /** @description 1-based. */
                                line: number;
                                /** @description 1-based, in characters of the line. */
                                column: number;
                                /** @description The line, trimmed, at most about 200 characters around the match. */
                                preview: string;
                            })[];
                            /** @description Stopped at limit, at TOOLGATE_SEARCH_MAX_FILES entries or at TOOLGATE_SEARCH_TIMEOUT_MS: there may be more. */
                            truncated: boolean;
                            files_searched: number;
                            files_matched: number;
                            entries_visited: number;
                            skipped_binary: number;
                            /** @description Files over TOOLGATE_MAX_READ_BYTES, not searched. */
                            skipped_large: number;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    edit_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt",
                 *       "old_text": "hello",
                 *       "new_text": "hello, world",
                 *       "dry_run": true
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /** @description Text to replace (alias oldText, old). Use this or edits[]. */
                    old_text?: string;
                    /** @description Replacement text (alias newText, new). */
                    new_text?: string;
                    /** @default false */
                    replace_all?: boolean;
                    /** @description Several edits applied in order, all or nothing. */
                    edits?: {
                        /** @description Text to replace, quoted from the file (a few lines of context make it unique). */
                        old_text: string;
                        /** @description Replacement text. */
                        new_text: string;
                        /**
                         * @description Replace every match instead of requiring a unique one.
                         * @default false
                         */
                        replace_all?: boolean;
                    }[];
                    /** @description Insert new_text as whole lines after this line (0 = the top) instead of replacing old_text. */
                    insert_line?: number;
                    /** @description Encoding of the file (default utf-8); kept when writing back. */
                    encoding?: string;
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            applied: boolean;
                            replacements: number;
                            edits: {
                                /**
                                 * @description How loosely old_text had to be matched.
                                 * @enum {string}
                                 */
                                stage: "exact" | "line_endings" | "trailing_whitespace" | "indentation" | "unicode";
                                replacements: number;
                                start_line: number;
                                end_line: number;
                            }[];
                            /** @description The edited region ±4 lines, with line numbers. */
                            snippet: string;
                            /** @description Unified diff, cut at 100 lines or 10 KiB. */
                            diff_preview: string;
                            diff_truncated: boolean;
                            /** @description Lines added by the whole change (exact even when the preview is cut). */
                            lines_added: number;
                            lines_removed: number;
                            backup_id: string | null;
                            version: components["schemas"]["Version"];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    replace_in_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt",
                 *       "old": "hello",
                 *       "new": "hello, world"
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /** @description Text to find (exact, case-sensitive), or a JavaScript regular expression with regex: true. */
                    old: string;
                    /** @description Replacement. Taken literally unless regex is true, where $1, $`<name>`, $& and $$ work as in String.prototype.replace. */
                    new: string;
                    /**
                     * @description Treat old as a regular expression (flags g and m: ^ and $ match at line starts and ends). Runs under a time limit.
                     * @default false
                     */
                    regex?: boolean;
                    /** @description Replace at most this many matches, from the start of the file (default: all). */
                    count?: number;
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description Matches replaced (or that would be on a dry run); 0 when nothing matched. */
                            replacements: number;
                            applied: boolean;
                            /** @description Unified diff, cut at 100 lines or 10 KiB. */
                            diff_preview: string;
                            diff_truncated: boolean;
                            /** @description Lines added by the whole change (exact even when the preview is cut). */
                            lines_added: number;
                            lines_removed: number;
                            backup_id: string | null;
                            version: components["schemas"]["Version"];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    str_replace_based_edit_tool: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "command": "str_replace",
                 *       "path": "notes.txt",
                 *       "old_str": "world",
                 *       "new_str": "there"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description view, create, str_replace, insert or undo_edit.
                     * @enum {string}
                     */
                    command: "view" | "create" | "str_replace" | "insert" | "undo_edit";
                    /** @description File or directory relative to the workspace root (alias file_path). */
                    path: string;
                    /** @description view: [start_line, end_line], 1-based, inclusive; -1 as end_line reads to the end. */
                    view_range?: number[];
                    /** @description create: the content of the new file. */
                    file_text?: string;
                    /** @description str_replace: the text to replace; must match one place in the file. */
                    old_str?: string;
                    /** @description str_replace: the replacement (default empty); insert: the lines to insert (alias insert_text). */
                    new_str?: string;
                    /** @description insert: the line after which new_str goes (0 = the top of the file). */
                    insert_line?: number;
                    /** @description str_replace, insert, undo_edit: sha256 of the file as you viewed it (data.version.sha256 of view); CONFLICT when it changed since. Needed when the server requires versions. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            command: string;
                            path: string;
                            /** @description Whether the command changed a file (false for view). */
                            applied: boolean;
                            /** @description view of a directory: the paths listed. */
                            entries?: string[];
                            /** @description Changes: unified diff, cut at 100 lines or 10 KiB. */
                            diff_preview?: string;
                            diff_truncated?: boolean;
                            lines_added?: number;
                            lines_removed?: number;
                            backup_id?: string | null;
                            version?: components["schemas"]["Version"] | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    apply_patch: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "patch": "*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello, there\n+hello, there!\n*** End Patch\n"
                 *     }
                 */
                "application/json": {
                    /** @description A V4A patch: '*** Begin Patch', then '*** Add File: `<path>`' ('+' lines), '*** Update File: `<path>`' (optional '*** Move to: `<path>`', then '@@' hunks of ' ', '-', '+' lines) or '*** Delete File: `<path>`' sections, then '*** End Patch'. Alias: input. */
                    patch?: string;
                    /** @description The Responses API's apply_patch_call operation: {type: create_file|update_file|delete_file, path, diff}. */
                    operation?: {
                        /** @enum {string} */
                        type: "create_file";
                        path: string;
                        diff: string;
                    } | {
                        /** @enum {string} */
                        type: "update_file";
                        path: string;
                        diff: string;
                    } | {
                        /** @enum {string} */
                        type: "delete_file";
                        path: string;
                        diff?: string;
                    };
                    /**
                     * @description The Responses API operation given flat (with path and diff) instead of in operation.
                     * @enum {string}
                     */
                    type?: "create_file" | "update_file" | "delete_file";
                    /** @description Path of the flat Responses API operation. */
                    path?: string;
                    /** @description Diff of the flat Responses API operation: '+' lines for create_file, '@@' hunks for update_file. */
                    diff?: string;
                    /** @description Versions of the existing files the patch updates, moves or deletes (the sha256 of data.version from read_file or a view): a string when it changes one such file, a list of {path, sha256} for several. CONFLICT when a file changed since; needed when the server requires versions. */
                    expected_sha256?: string | {
                        path: string;
                        sha256: string;
                    }[];
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            applied: boolean;
                            /** @description One entry per file, in patch order, each with its own diff. */
                            files: {
                                path: string;
                                /** @enum {string} */
                                operation: "create" | "update" | "delete" | "move";
                                move_to: string | null;
                                /** @description Unified diff, cut at 100 lines or 10 KiB. */
                                diff_preview: string;
                                diff_truncated: boolean;
                                /** @description Lines added by the whole change (exact even when the preview is cut). */
                                lines_added: number;
                                lines_removed: number;
                                /** @description Backup of the old content (update, move, delete); restore_backup undoes that file. */
                                backup_id: string | null;
                                /** @description Version of the file after the change; null for a delete or a dry run. */
                                version: components["schemas"]["Version"] | null;
                            }[];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    append_to_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt",
                 *       "content": "one more line\n"
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /** @description Text to add at the end of the file (utf-8). Include a leading "\n" when the file does not end with a newline. */
                    content: string;
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            applied: boolean;
                            /** @description Unified diff, cut at 100 lines or 10 KiB. */
                            diff_preview: string;
                            diff_truncated: boolean;
                            /** @description Lines added by the whole change (exact even when the preview is cut). */
                            lines_added: number;
                            lines_removed: number;
                            bytes_appended: number;
                            backup_id: string | null;
                            version: components["schemas"]["Version"];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    list_backups: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt"
                 *     }
                 */
                "application/json": {
                    /** @description Only backups of this file (relative path). */
                    path?: string;
                    /** @default 50 */
                    limit?: number;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            backups: {
                                backup_id: string;
                                path: string;
                                /** @description The tool whose change was backed up. */
                                operation: string;
                                created_at: string;
                                size_bytes: number;
                                sha256: string | null;
                            }[];
                            truncated: boolean;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    restore_backup: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt",
                 *       "dry_run": true
                 *     }
                 */
                "application/json": {
                    /** @description Id from list_backups (or the backup_id a change returned). Give this or path. */
                    backup_id?: string;
                    /** @description Instead of backup_id: restore the newest backup of this file, the content before its last change. */
                    path?: string;
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            applied: boolean;
                            path: string;
                            /** @description Unified diff, cut at 100 lines or 10 KiB. */
                            diff_preview: string;
                            diff_truncated: boolean;
                            /** @description Lines added by the whole change (exact even when the preview is cut). */
                            lines_added: number;
                            lines_removed: number;
                            /** @description Backup of the content the restore replaced (a restore can be undone too). */
                            backup_id: string | null;
                            version: components["schemas"]["Version"] | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    list_checkpoints: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "limit": 10
                 *     }
                 */
                "application/json": {
                    /**
                     * @description Checkpoints to list, newest first (at most 100).
                     * @default 20
                     */
                    limit?: number;
                    /** @description List only checkpoints older than this one (next_before of the previous page). */
                    before?: string;
                    /**
                     * @description Give each listed file its diff over the checkpoint (from before its first change there to after its last), where both sides are still kept, are text and at most 256 KiB, and the caller may read the file (at most 100 per page).
                     * @default false
                     */
                    diffs?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            checkpoints: {
                                /** @description The checkpoint id: rewind {checkpoint} puts every file changed at or after it back as it was just before it. */
                                id: string;
                                /** @description The agent turn its calls named; null for a call without a turn (a checkpoint of its own). */
                                turn: string | null;
                                /** @description Time of its first change (ISO 8601). */
                                created_at: string;
                                /** @description Time of its last change. */
                                updated_at: string;
                                /** @description Who made its first change (token id; null without tokens). */
                                actor: string | null;
                                /** @description Everyone who changed files in it. */
                                actors: (string | null)[];
                                /** @description Mutating calls recorded in it. */
                                calls: number;
                                /** @description The tools of those calls. */
                                tools: string[];
                                /** @description A rewind: the checkpoint it rewound to (it can itself be rewound). */
                                rewound_to: string | null;
                                /** @description The changes, in order, each path once per operation (at most 200 listed). */
                                files: {
                                    path: string;
                                    /** @enum {string} */
                                    op: "create" | "update" | "delete" | "move";
                                    /** @enum {string} */
                                    kind: "file" | "directory" | "symlink" | "other";
                                    /** @description A move: the destination. */
                                    to?: string;
                                    /** @description Insertions (0 when not known: a command's change, a binary file). */
                                    lines_added: number;
                                    /** @description Deletions. */
                                    lines_removed: number;
                                    /** @description With diffs: the unified diff of this file over the checkpoint (absent where it cannot be shown). */
                                    diff?: string;
                                }[];
                                /** @description Changes in all (files lists the first ones). */
                                files_count: number;
                                lines_added: number;
                                lines_removed: number;
                            }[];
                            /** @description More, older checkpoints: pass this as before. null when this is the last page. */
                            next_before: string | null;
                            pruned: {
                                /** @description Checkpoints dropped by retention (TOOLGATE_CHECKPOINT_MAX_TURNS, TOOLGATE_CHECKPOINT_MAX_AGE_DAYS). */
                                count: number;
                                /** @description The time of the newest dropped one: nothing before it can be rewound. */
                                before: string | null;
                            };
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    rewind: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "checkpoint": "latest",
                 *       "dry_run": true
                 *     }
                 */
                "application/json": {
                    /** @description The checkpoint to go back to (an id from list_checkpoints, or 'latest' for the newest): every file changed at or after it is put back as it was just before it. Give this or turn. */
                    checkpoint?: string | "latest";
                    /** @description Instead of checkpoint: the turn id the calls named (that turn's checkpoint). */
                    turn?: string;
                    /**
                     * @description Answer the changes the rewind would make, with their diffs, and change nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /**
                     * @description Overwrite files changed since their last recorded change (by hand, by another service) instead of stopping with CONFLICT.
                     * @default false
                     */
                    force?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            applied: boolean;
                            /** @description The checkpoint rewound to. */
                            checkpoint: string;
                            turn: string | null;
                            /** @description Checkpoints at or after it whose changes were taken back. */
                            checkpoints_rewound: number;
                            /** @description Every change the rewind makes (or would make), in order, with its diff or the content a delete removes. */
                            changes: components["schemas"]["ApprovalChange"][];
                            /** @description Diffs and contents past 256 KiB in all were left out (the entries stay). */
                            changes_truncated: boolean;
                            /** @description Paths changed outside the record that force: true overwrote. */
                            forced: string[];
                            /** @description The rewind's own checkpoint (null on a dry run or when nothing changed): rewinding to it takes the rewind back. */
                            rewind_checkpoint: string | null;
                            lines_added: number;
                            lines_removed: number;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    create_directory: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "docs/drafts"
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /**
                     * @description Create missing parent directories too (like mkdir -p).
                     * @default true
                     */
                    parents?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description false when the directory already existed. */
                            created: boolean;
                            /** @description The first directory that was created (the others are below it). */
                            created_path: string | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    move_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "notes.txt",
                 *       "destination": "archive/notes.txt"
                 *     }
                 */
                "application/json": {
                    /** @description File or directory to move (relative to the workspace root). */
                    path: string;
                    /** @description Its new path, including the name (e.g. "docs/old/notes.md"). Missing parent directories are created. */
                    destination: string;
                    /**
                     * @description Replace an existing destination file (it is backed up first). A directory is never overwritten.
                     * @default false
                     */
                    overwrite?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            moved: boolean;
                            /** @enum {string} */
                            type: "file" | "directory";
                            source: string;
                            destination: string;
                            overwritten: boolean;
                            /** @description Backup of the overwritten destination file. */
                            backup_id: string | null;
                            created_directory: string | null;
                            /** @description Version of the moved file at its new path (null for a directory). */
                            version: components["schemas"]["Version"] | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    delete_file: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "archive/notes.txt",
                 *       "dry_run": true
                 *     }
                 */
                "application/json": {
                    /** @description Path relative to the workspace root (POSIX, e.g. "src/main.py"). */
                    path: string;
                    /**
                     * @description Compute everything and return the diff, but write nothing.
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes. */
                    expected_mtime_ms?: number;
                    /** @description size_bytes of the version you read. A version only together with expected_mtime_ms. */
                    expected_size_bytes?: number;
                    /** @description sha256 of the version you read. */
                    expected_sha256?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            deleted: boolean;
                            /** @description restore_backup with this id brings the file back; null on a dry run or with backups disabled. */
                            backup_id: string | null;
                            version: components["schemas"]["Version"];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    find_large_files: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": ".",
                 *       "min_size_bytes": 1,
                 *       "limit": 10
                 *     }
                 */
                "application/json": {
                    /**
                     * @description Directory relative to the workspace root; "." is the root.
                     * @default .
                     */
                    path?: string;
                    /**
                     * @description Smallest size reported (default 10 MiB).
                     * @default 10485760
                     */
                    min_size_bytes?: number;
                    /**
                     * @description Most files returned, largest first.
                     * @default 20
                     */
                    limit?: number;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description Largest first. */
                            files: {
                                path: string;
                                size: number;
                                mtime_ms: number;
                            }[];
                            files_scanned: number;
                            /** @description The walk stopped at TOOLGATE_SEARCH_MAX_FILES entries or the time limit: larger files may exist. */
                            truncated: boolean;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    disk_usage: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "."
                 *     }
                 */
                "application/json": {
                    /**
                     * @description Directory relative to the workspace root; "." is the root.
                     * @default .
                     */
                    path?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            path: string;
                            /** @description Sum of the sizes of the regular files under the path (apparent size). */
                            bytes: number;
                            /** @description Space they take on disk (allocated blocks). */
                            disk_bytes: number;
                            files: number;
                            directories: number;
                            /** @description Stopped at TOOLGATE_SEARCH_MAX_FILES entries or the time limit: the totals are lower bounds. */
                            truncated: boolean;
                            /** @description The file system holding the path: space available to the service and its size. */
                            volume: {
                                free_bytes: number;
                                total_bytes: number;
                            };
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    read_docx: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "report.docx"
                 *     }
                 */
                "application/json": {
                    /** @description A .docx file, relative to the workspace root. */
                    path: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description The document as Markdown. */
                            content: string;
                            /** @description Output was cut at TOOLGATE_MAX_OUTPUT_BYTES. */
                            truncated: boolean;
                            /** @description Embedded images, stored for this caller. */
                            attachments: components["schemas"]["Attachment"][];
                            /** @description Images past the per-document limits, not stored. */
                            images_omitted: number;
                            warnings: string[];
                            /** @description Size of the document file. */
                            size_bytes: number;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    read_excel: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "path": "data.xlsx",
                 *       "sheet": 1,
                 *       "range": "A1:D20"
                 *     }
                 */
                "application/json": {
                    /** @description A .xlsx or .xlsm workbook, relative to the workspace root (legacy .xls is refused: save it as .xlsx). */
                    path: string;
                    /** @description One sheet, by name or 1-based position; default every sheet. */
                    sheet?: string | number;
                    /** @description A cell range of the sheet(s), e.g. "A1:D50" or "A100:F200". */
                    range?: string;
                    /**
                     * @description Show formulas next to their cached values (default: values only).
                     * @default false
                     */
                    formulas?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description The document as Markdown. */
                            content: string;
                            /** @description Output was cut at TOOLGATE_MAX_OUTPUT_BYTES. */
                            truncated: boolean;
                            /** @description Embedded images, stored for this caller. */
                            attachments: components["schemas"]["Attachment"][];
                            /** @description Images past the per-document limits, not stored. */
                            images_omitted: number;
                            warnings: string[];
                            /** @description Size of the document file. */
                            size_bytes: number;
                            /** @description Every sheet of the workbook, shown or not. */
                            sheets: {
                                index: number;
                                name: string;
                                /** @description visible, hidden or veryHidden */
                                state: string;
                                /** @description Used range, e.g. A1:D40; null for an empty sheet. */
                                dimensions: string | null;
                            }[];
                            /** @description Where output stopped: continue with sheet and range from this row. */
                            truncated_at: {
                                sheet: string;
                                row: number;
                            } | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    shell_readonly: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "command": "ls -la"
                 *     }
                 */
                "application/json": {
                    /** @description The command line, e.g. "ls -la src". No shell runs: pipes, redirections, ;, &&, $, backticks and globs are refused; quote names with spaces ('my file.txt'). */
                    command: string;
                    /** @description The arguments as an argv array, taken literally; then `command` is only the program name (e.g. "ls"). */
                    args?: string[];
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            program: string;
                            /** @description The arguments after the program, as they were run. */
                            argv: string[];
                            /** @description What the command prints. */
                            output: string;
                            /** @description Output was cut at TOOLGATE_MAX_OUTPUT_BYTES or a listing stopped at its limits. */
                            truncated: boolean;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    shell_write: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "command": "mkdir -p build"
                 *     }
                 */
                "application/json": {
                    /** @description The command line, e.g. "ls -la src". No shell runs: pipes, redirections, ;, &&, $, backticks and globs are refused; quote names with spaces ('my file.txt'). */
                    command: string;
                    /** @description The arguments as an argv array, taken literally; then `command` is only the program name (e.g. "ls"). */
                    args?: string[];
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            program: string;
                            /** @description The arguments after the program, as they were run. */
                            argv: string[];
                            /** @description What the command prints. */
                            output: string;
                            /** @description Output was cut at TOOLGATE_MAX_OUTPUT_BYTES or a listing stopped at its limits. */
                            truncated: boolean;
                            /** @description false when the directory already existed (mkdir -p). */
                            created: boolean;
                            created_path: string | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    shell_destructive: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "command": "rm archive/notes.txt"
                 *     }
                 */
                "application/json": {
                    /** @description The command line, e.g. "ls -la src". No shell runs: pipes, redirections, ;, &&, $, backticks and globs are refused; quote names with spaces ('my file.txt'). */
                    command: string;
                    /** @description The arguments as an argv array, taken literally; then `command` is only the program name (e.g. "ls"). */
                    args?: string[];
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            program: string;
                            /** @description The arguments after the program, as they were run. */
                            argv: string[];
                            /** @description What the command prints. */
                            output: string;
                            /** @description Output was cut at TOOLGATE_MAX_OUTPUT_BYTES or a listing stopped at its limits. */
                            truncated: boolean;
                            /** @description false only with -f for a file that did not exist. */
                            deleted: boolean;
                            /** @description restore_backup with this id brings the file back. */
                            backup_id: string | null;
                            /** @description Version of the file that was deleted. */
                            version: components["schemas"]["Version"] | null;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    web_fetch: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://example.com/"
                 *     }
                 */
                "application/json": {
                    /** @description The http:// or https:// URL to fetch. */
                    url: string;
                    /** @description Largest response body to accept (default and ceiling: TOOLGATE_WEB_MAX_BYTES); a larger one is FILE_TOO_LARGE. */
                    max_bytes?: number;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description The URL asked for, as parsed. */
                            url: string;
                            /** @description The URL the content came from, after redirects. */
                            final_url: string;
                            /** @description HTTP status of the final response. */
                            status: number;
                            /** @description Media type without parameters. */
                            content_type: string;
                            /**
                             * @description markdown for HTML pages (main content, links absolute); json and text as received.
                             * @enum {string}
                             */
                            format: "markdown" | "json" | "text";
                            title: string | null;
                            content: string;
                            /** @description Body bytes received (after content decoding). */
                            bytes: number;
                            /** @description Each redirect target followed, in order. */
                            redirects: string[];
                            /** @description content was cut at TOOLGATE_MAX_OUTPUT_BYTES. */
                            truncated: boolean;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    web_search: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "query": "ETag If-Match optimistic locking",
                 *       "limit": 3
                 *     }
                 */
                "application/json": {
                    /** @description What to search for. */
                    query: string;
                    /**
                     * @description Most results to return (1 to 20).
                     * @default 5
                     */
                    limit?: number;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @enum {string} */
                            provider: "duckduckgo" | "searxng" | "brave";
                            query: string;
                            results: {
                                title: string;
                                url: string;
                                snippet: string;
                            }[];
                            /** @description What to know about these results (DuckDuckGo's are instant answers, not a result list). */
                            note?: string;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    time_now: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "timezone": "UTC"
                 *     }
                 */
                "application/json": {
                    /** @description IANA time zone, e.g. 'Europe/Berlin' or 'UTC' (default: the server's zone). */
                    timezone?: string;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description ISO 8601 with the offset written out, e.g. 2026-11-24T22:30:00+01:00. */
                            iso: string;
                            timezone: string;
                            /** @description e.g. +01:00 */
                            utc_offset: string;
                            unix_ms: number;
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    run_command: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed. */
                "if-match"?: string;
                "x-request-id"?: string;
                "x-project-id"?: string;
                /** @description Policy switches for this call, e.g. `memory=on`. */
                "x-toolgate-switches"?: string;
                /** @description The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`. */
                "toolgate-turn"?: string;
                /** @description `wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "command": "ls -la"
                 *     }
                 */
                "application/json": {
                    /** @description A command line run by /bin/sh -c (pipes, &&, redirections work). Give this or argv. */
                    command?: string;
                    /** @description A program and its arguments, run without a shell. Give this or command. */
                    argv?: string[];
                    /**
                     * @description Directory to run in, relative to the project root (seen as /workspace inside).
                     * @default .
                     */
                    cwd?: string;
                    /** @description Seconds before the command and every process it started are killed (at most the service limit, TOOLGATE_EXEC_TIMEOUT_S). */
                    timeout_s?: number;
                    /** @description Extra environment variables as NAME=value (names like NAME_1; loader and shell variables such as LD_PRELOAD are refused). The command starts from PATH, HOME=/tmp and LANG only. */
                    env?: string[];
                    /** @description Text given to the command on its standard input (default: empty). */
                    stdin?: string;
                    /**
                     * @description Run the command, answer its changes[] with diffs, and land nothing (it still runs: decided like any run).
                     * @default false
                     */
                    dry_run?: boolean;
                    /** @description Repeat of a call that needed approval: the id from data.approval.id. */
                    approval_id?: string;
                };
            };
        };
        responses: {
            /** @description success or partial */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "success" | "partial";
                        data: {
                            /** @description What ran, as one line (argv joined with spaces, for display). */
                            command: string;
                            cwd: string;
                            /** @description The exit status; 128+N when the command died of signal N (as a shell reports it); null when it was killed by the service. */
                            exit_code: number | null;
                            /** @description The signal the command died of (SIGKILL when the service stopped it). */
                            signal: string | null;
                            timed_out: boolean;
                            /** @description Why the service killed the command, or null when it ended by itself. */
                            stopped_by: ("timeout" | "cancelled" | "quota_exceeded" | "shutdown") | null;
                            stdout: string;
                            stderr: string;
                            /** @description Bytes the command wrote to stdout in all. */
                            stdout_bytes: number;
                            stderr_bytes: number;
                            /** @description Bytes left out between the head and the tail kept (0: stdout is whole). */
                            stdout_omitted_bytes: number;
                            stderr_omitted_bytes: number;
                            duration_ms: number;
                            /** @description Project entries the command created, changed or removed, as they landed (read from the run's overlay layer; .git and node_modules included). */
                            files_changed: {
                                path: string;
                                /** @enum {string} */
                                change: "created" | "changed" | "removed";
                                /** @enum {string} */
                                kind: "file" | "directory" | "symlink" | "other";
                                size: number | null;
                                /** @description The file as it landed; null for a removal, a directory or symbolic link, or a path under TOOLGATE_EXEC_BULK_DIRS. */
                                version: components["schemas"]["Version"] | null;
                                /** @description The backup of what the change replaced or removed (undo_edit and restore_backup bring it back); null when none was kept. */
                                backup_id: string | null;
                            }[];
                            /** @description More changes landed than files_changed lists (the first 1000). */
                            files_changed_truncated: boolean;
                            /** @description Entries of the command's changes thrown away, none landing (it was stopped, or its changes could not all be read); -1 when they could not be counted; 0 when its changes landed. */
                            changes_discarded: number;
                            /** @description The command's changes landed (false on a dry run, and when they were discarded). */
                            applied: boolean;
                            /** @description dry_run only: each change the command made, with its diff (or the content a removal takes), as every mutating tool shows them. */
                            changes?: components["schemas"]["ApprovalChange"][];
                            /** @description Entries the command made that never land: FIFOs, sockets and devices, names that are not UTF-8, reserved paths. */
                            not_landed: {
                                path: string;
                                why: string;
                            }[];
                        } | null;
                        text: string;
                        stats: {
                            [key: string]: number;
                        };
                        context: components["schemas"]["EnvelopeContext"];
                        error?: unknown;
                    };
                };
            };
            /** @description waiting for approval: nothing changed yet */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingApprovalEnvelope"];
                };
            };
            /** @description error envelope */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description error envelope */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    get_attachment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The attachment bytes, with its media type as Content-Type. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description error envelope (404 for an unknown, expired or foreign id) */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
}
