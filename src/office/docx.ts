// .docx → Markdown, run inside the office worker (worker.ts): mammoth turns the document into semantic HTML
// (headings from styles, lists, tables, bold/italic, images through a callback), turndown with the GFM
// plugin turns that into Markdown with pipe tables. mammoth's own Markdown output is deprecated and writes
// tables as loose paragraphs, hence the HTML step.
//
// docxToMarkdown is shipped to the worker as source text (Function#toString, like search-worker.ts), so it
// must be self-contained: no imports and nothing from outside its body; the libraries come as arguments.
import type mammothModule from 'mammoth';
import type TurndownModule from 'turndown';

export interface DocxLibraries {
  mammoth: typeof mammothModule;
  TurndownService: typeof TurndownModule;
  gfm: { gfm: TurndownModule.Plugin };
}

export interface ImageLimits {
  /** Images returned as attachments; later ones are left out and counted. */
  maxImages: number;
  /** Bytes of all returned images together. */
  maxImageBytes: number;
}

/** An extracted image; `bytes` owns its ArrayBuffer, so it can be transferred from the worker. */
export interface RawAttachment {
  name: string;
  media_type: string;
  bytes: Uint8Array;
  /** An image the main thread held back (run.ts): its bytes are that entry's, `bytes` is empty. */
  held?: string;
}

/**
 * Images the main thread kept out of the parser's copy (zip-guard.ts, `hold`): each such entry reads as
 * `prefix` + its name (the prefix carries a nonce, so a document cannot forge one); `sizes` by name.
 */
export interface HeldImages {
  prefix: string;
  sizes: Record<string, number>;
}

export interface ConvertedDocx {
  markdown: string;
  attachments: RawAttachment[];
  imagesOmitted: number;
  warnings: string[];
}

/** Converts the (already checked, stored) zip of a .docx; images become `![alt](attachment:imageN.ext)`. */
export async function docxToMarkdown(libs: DocxLibraries, zip: Buffer, limits: ImageLimits & { held?: HeldImages }): Promise<ConvertedDocx> {
  const extensions: Record<string, string> = {
    'image/png': 'png',
    'image/jpeg': 'jpg',
    'image/gif': 'gif',
    'image/bmp': 'bmp',
    'image/tiff': 'tiff',
    'image/webp': 'webp',
    'image/svg+xml': 'svg',
    'image/x-emf': 'emf',
    'image/x-wmf': 'wmf',
  };
  const attachments: RawAttachment[] = [];
  let imagesOmitted = 0;
  let imageBytes = 0;
  const convertImage = libs.mammoth.images.imgElement(async (image) => {
    const data = await image.readAsBuffer();
    const text = limits.held && data.length < 4096 ? data.toString('utf8') : '';
    const held = limits.held && text.startsWith(limits.held.prefix) ? text.slice(limits.held.prefix.length) : undefined;
    const size = held !== undefined ? (limits.held?.sizes[held] ?? 0) : data.length;
    if (attachments.length >= limits.maxImages || imageBytes + size > limits.maxImageBytes) {
      imagesOmitted++;
      return { src: 'omitted:over-the-image-limit' };
    }
    imageBytes += size;
    const name = `image${attachments.length + 1}.${extensions[image.contentType] ?? 'bin'}`;
    const media_type = image.contentType || 'application/octet-stream';
    // A copy that owns its memory: mammoth's buffer may be a view into the whole zip.
    attachments.push(held !== undefined ? { name, media_type, bytes: new Uint8Array(0), held } : { name, media_type, bytes: new Uint8Array(data) });
    return { src: `attachment:${name}` };
  });

  // externalFileAccess: linked (not embedded) images and files are never read from the host.
  const result = await libs.mammoth.convertToHtml({ buffer: zip }, { convertImage, externalFileAccess: false });
  const turndown = new libs.TurndownService({ headingStyle: 'atx', bulletListMarker: '-', codeBlockStyle: 'fenced', emDelimiter: '*', strongDelimiter: '**' });
  turndown.use(libs.gfm.gfm);
  // mammoth anchors bookmarks and footnote targets with empty <a id>; they carry no text.
  turndown.addRule('emptyAnchor', { filter: (node) => node.nodeName === 'A' && !node.getAttribute('href') && node.textContent === '', replacement: () => '' });
  // turndown pads list markers to four columns ('-   item'); one space is what Markdown writers emit and
  // costs fewer tokens. Nested content is indented to the item's text, as CommonMark requires.
  turndown.addRule('compactListItem', {
    filter: 'li',
    replacement: (content, node) => {
      const parent = node.parentNode as { nodeName: string; getAttribute(name: string): string | null; children: ArrayLike<unknown> } | null;
      let prefix = '- ';
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? 1);
        prefix = `${start + Array.prototype.indexOf.call(parent.children, node)}. `;
      }
      const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n/gm, `\n${' '.repeat(prefix.length)}`);
      return prefix + body + (node.nextSibling && !body.endsWith('\n') ? '\n' : '');
    },
  });
  const markdown = turndown.turndown(result.value).trim() + '\n';
  const warnings = result.messages.filter((m) => m.type === 'error').map((m) => m.message).slice(0, 20);
  return { markdown, attachments, imagesOmitted, warnings };
}
