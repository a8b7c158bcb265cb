// The catalogue's errors of web_fetch and web_search (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

export const webErrors = {
  unknownTimeZone: (timezone: string) =>
    new ToolError('INVALID_PARAM', `Unknown time zone '${timezone.slice(0, 100)}'; give an IANA name such as 'Europe/Berlin', 'America/New_York' or 'UTC'.`),
};
