// A fetched HTML page as readable Markdown: the main content (Readability, falling back to <main>/<article>/<body>),
// every link and image made absolute against the page's URL (or its <base>).
//
// The conversion runs in a worker thread (src/workers/bounded-pool.ts) under a heap limit and the web call's
// deadline: a page of 22 KB nested 2,000 deep kept Readability and Turndown busy for minutes on the main
// thread, and 120,000 flat paragraphs took 1.7 GB. Pages past MAX_DEPTH or MAX_ELEMENTS are refused right after
// the parse, before either runs (docs/web.md, "Converting HTML").
import { createRequire } from 'node:module';
import { E } from '../errors.js';
import { BoundedPool, handlerSource, WorkerFailure, WorkerJobError } from '../workers/bounded-pool.js';

export interface PageMarkdown {
  title: string | null;
  markdown: string;
}

/** Nesting past this is refused (browsers' tree builders cap it near here too; real pages stay far below). */
export const MAX_DEPTH = 512;
/** Elements past this are refused: Turndown's time grows faster than the page. */
export const MAX_ELEMENTS = 60_000;
/** The converting worker's old-generation heap (a 5 MiB page parses in well under it). */
export const HTML_WORKER_HEAP_MB = 192;

interface Modules {
  linkedom: string;
  readability: string;
  turndown: string;
}

interface ConvertJob {
  html: string;
  pageUrl: string;
  modules: Modules;
  maxDepth: number;
  maxElements: number;
}

// The DOM is linkedom's; the project compiles without the DOM lib, so its nodes are typed loosely.
interface LooseElement {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  replaceWith(...nodes: unknown[]): void;
  querySelectorAll(selectors: string): Iterable<LooseElement>;
  querySelector(selectors: string): LooseElement | null;
  closest(selectors: string): LooseElement | null;
  parentElement: LooseElement | null;
  innerHTML: string;
  outerHTML: string;
  textContent: string | null;
}
interface LooseDocument extends LooseElement {
  title: string;
  body: LooseElement | null;
  documentElement: LooseElement;
  createTextNode(text: string): unknown;
}

/*
 * Runs in the worker, shipped as source text (handlerSource) with PageConverter as its argument: both
 * self-contained, packages loaded by the absolute paths the job names.
 */
function convertInWorker(job: ConvertJob, Converter: typeof PageConverter): { result: PageMarkdown } {
  return { result: new Converter(job).convert() };
}

/**
 * One page's conversion, in the worker, phase by phase: the raw-text prescan, the parse and its shape check,
 * the page cleaned of chrome and its links made absolute, the main content, Markdown. Shipped as source text
 * like convertInWorker, so it must be self-contained too: nothing from outside its body.
 */
class PageConverter {
  // Elements that carry no readable content, or content a model should not mistake for the page's own.
  readonly dropped = 'script, style, noscript, template, iframe, object, embed, canvas, svg, link, meta';
  // Page chrome, dropped before Readability too: on short pages it keeps menus and footers as content.
  readonly chrome = 'nav, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true], [hidden]';
  // A <header> is chrome at page level but holds the title inside an article.
  readonly pageHeader = 'header';
  // Readability gives up (throws) past this many elements; the fallback then handles the page.
  readonly readabilityElements = 20_000;

  readonly job: ConvertJob;
  readonly parseHTML: (html: string) => { document: LooseDocument };
  readonly Readability: typeof import('@mozilla/readability').Readability;
  readonly TurndownService: typeof import('turndown');

  constructor(job: ConvertJob) {
    this.job = job;
    // Not the free `require`: the bundler rewrites that name in this source (scripts/bundle.mjs).
    const { createRequire } = process.getBuiltinModule('node:module');
    const load = (path: string) => createRequire(path)(path);
    this.parseHTML = (load(job.modules.linkedom) as { parseHTML(html: string): { document: LooseDocument } }).parseHTML;
    this.Readability = (load(job.modules.readability) as { Readability: typeof import('@mozilla/readability').Readability }).Readability;
    this.TurndownService = load(job.modules.turndown) as typeof import('turndown');
  }

  convert(): PageMarkdown {
    this.prescan(this.job.html);
    const { document } = this.parseHTML(this.job.html);
    this.checkShape(document);
    this.dropChrome(document);
    this.absolutizeLinks(document, this.baseOf(document, this.job.pageUrl));
    const cleaned = document.documentElement.outerHTML;
    const title = document.title?.trim() || null;

    const article = this.readableContent(cleaned);
    const content = article?.content ?? this.fallbackContent(document);
    const markdown = this.turndown()
      .turndown(content)
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    return { title: article?.title?.trim() || title, markdown };
  }

  tooManyElements(): Error {
    const max = this.job.maxElements;
    return this.refuse(`The page has more than ${max} HTML elements, more than web_fetch converts to Markdown; fetch a smaller page or a plain-text version.`, { max_elements: max });
  }

  tooDeep(): Error {
    const max = this.job.maxDepth;
    return this.refuse(`The page nests HTML elements more than ${max} deep, more than web_fetch converts to Markdown; fetch a plain-text version.`, { max_depth: max });
  }

  refuse(message: string, details: Record<string, unknown>): Error {
    return Object.assign(new Error(message), { code: 'FILE_TOO_LARGE', details });
  }

  /**
   * Before parsing (linkedom needs minutes for 200,000 levels): tags counted in the raw text. Loose on
   * purpose, so that no real page is refused here: end tags a page may leave out (<p>, <li>, <td>…) and void
   * elements do not nest, and the bounds are several times the ones checkShape applies to the parsed tree.
   */
  prescan(html: string): void {
    const OPTIONAL_END = /^(p|li|dt|dd|option|optgroup|tr|td|th|thead|tbody|tfoot|colgroup|caption|rp|rt|html|head|body|area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr)$/i;
    // [^<>] keeps the scan linear: a '<' without its '>' ends the attempt at the next '<'.
    const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)[^<>]*?(\/?)>/g;
    let depth = 0;
    let tags = 0;
    for (const m of html.matchAll(TAG)) {
      tags++;
      if (tags > this.job.maxElements * 4) throw this.tooManyElements();
      if (OPTIONAL_END.test(m[2] as string) || m[3] === '/') continue;
      depth = m[1] === '/' ? Math.max(0, depth - 1) : depth + 1;
      if (depth > this.job.maxDepth * 4) throw this.tooDeep();
    }
  }

  /** Depth and count, walked without recursion (document order: a parent comes before its children). */
  checkShape(doc: LooseDocument): void {
    const depth = new Map<unknown, number>();
    let elements = 0;
    for (const el of doc.querySelectorAll('*')) {
      elements++;
      if (elements > this.job.maxElements) throw this.tooManyElements();
      const d = (depth.get(el.parentElement) ?? 0) + 1;
      depth.set(el, d);
      if (d > this.job.maxDepth) throw this.tooDeep();
    }
  }

  dropChrome(doc: LooseDocument): void {
    for (const el of [...doc.querySelectorAll(this.dropped)]) el.remove();
    for (const el of [...doc.querySelectorAll(this.chrome)]) el.remove();
    for (const el of [...doc.querySelectorAll(this.pageHeader)]) if (!el.closest('main, article, [role=main]')) el.remove();
  }

  /** `href` resolved against `base`; null for schemes a reader cannot follow (javascript:, data:, …). */
  absolute(href: string, base: string, schemes: readonly string[]): string | null {
    try {
      const url = new URL(href.trim(), base);
      return schemes.includes(url.protocol) ? url.href : null;
    } catch {
      return null;
    }
  }

  absolutizeLinks(doc: LooseDocument, base: string): void {
    for (const a of doc.querySelectorAll('a[href]')) {
      const href = this.absolute(a.getAttribute('href') ?? '', base, ['http:', 'https:', 'mailto:']);
      if (href === null) a.removeAttribute('href');
      else a.setAttribute('href', href);
    }
    for (const img of doc.querySelectorAll('img')) {
      const src = this.absolute(img.getAttribute('src') ?? '', base, ['http:', 'https:']);
      // An image without a fetchable source (data: URIs can be megabytes) is kept as its alt text only.
      if (src === null) img.replaceWith(doc.createTextNode(img.getAttribute('alt') ?? ''));
      else {
        img.setAttribute('src', src);
        img.removeAttribute('srcset');
      }
    }
  }

  baseOf(doc: LooseDocument, pageUrl: string): string {
    const declared = doc.querySelector('base[href]')?.getAttribute('href');
    if (!declared) return pageUrl;
    return this.absolute(declared, pageUrl, ['http:', 'https:']) ?? pageUrl;
  }

  fallbackContent(doc: LooseDocument): string {
    const root = doc.querySelector('main, article, [role=main]') ?? doc.body ?? doc.documentElement;
    return root.innerHTML;
  }

  readableContent(html: string): { title: string | null; content: string } | null {
    // Readability rewrites the document it reads, so it gets its own parse.
    const { document } = this.parseHTML(html);
    try {
      const article = new this.Readability(document as never, { maxElemsToParse: this.readabilityElements, keepClasses: false }).parse();
      if (!article?.content || (article.textContent ?? '').trim() === '') return null;
      return { title: article.title || null, content: article.content };
    } catch {
      return null;
    }
  }

  turndown(): InstanceType<typeof import('turndown')> {
    const service = new this.TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
    service.remove(['script', 'style', 'noscript', 'template']);
    // Turndown pads list markers to four columns ('-   item'); one space is what people write and read.
    service.addRule('listItem', {
      filter: 'li',
      replacement(content, node) {
        const li = node as unknown as { parentNode: LooseElement & { nodeName: string; children: ArrayLike<unknown> }; nextSibling: unknown };
        const list = li.parentNode;
        let marker = '- ';
        if (list.nodeName === 'OL') {
          const start = Number(list.getAttribute('start') ?? '1');
          marker = `${(Number.isFinite(start) ? start : 1) + Array.prototype.indexOf.call(list.children, node)}. `;
        }
        const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n/gm, `\n${' '.repeat(marker.length)}`);
        return marker + body + (li.nextSibling && !/\n$/.test(body) ? '\n' : '');
      },
    });
    return service;
  }
}

let modules: Modules | undefined;

/** Package entry points, resolved from node_modules next to this module (or the bundle): loaded by the worker. */
function converterModules(): Modules {
  if (!modules) {
    const require = createRequire(import.meta.url);
    modules = { linkedom: require.resolve('linkedom'), readability: require.resolve('@mozilla/readability'), turndown: require.resolve('turndown') };
  }
  return modules;
}

// Process-wide for now (web/ lies below the service's runtime, src/workspace/runtime.ts): its settings are constants.
// A fresh worker per page, two at most: a kept worker would hold the heap its largest page grew (up to the
// limit, for good), which the process cannot spare next to the office readers; loading the DOM and Turndown
// anew costs a tenth of a second or two, small next to a fetch.
const pool = new BoundedPool({
  name: 'html',
  handler: handlerSource(convertInWorker, PageConverter),
  size: 2,
  reuse: false,
  resourceLimits: { maxOldGenerationSizeMb: HTML_WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
});

/**
 * Converts a page to Markdown off the main thread within `timeoutMs`; `pageUrl` is the URL it was finally
 * fetched from (after redirects). Throws ToolError: TIMEOUT, FILE_TOO_LARGE (too deep, too many elements, out
 * of the worker's heap) or ENCODING_ERROR (the converter failed on it).
 */
export async function htmlToMarkdown(html: string, pageUrl: string, timeoutMs: number, signal?: AbortSignal): Promise<PageMarkdown> {
  const job: ConvertJob = { html, pageUrl, modules: converterModules(), maxDepth: MAX_DEPTH, maxElements: MAX_ELEMENTS };
  try {
    return await pool.run<PageMarkdown>(job, { timeoutMs, signal });
  } catch (err) {
    if (err instanceof WorkerJobError) {
      if (err.code === 'FILE_TOO_LARGE') throw E.pageTooLarge(err.message, pageUrl, err.details);
      throw E.markdownFailed(pageUrl, err.message);
    }
    if (err instanceof WorkerFailure) {
      if (err.kind === 'timeout') {
        throw E.markdownTimeout(pageUrl, timeoutMs);
      }
      if (err.kind === 'memory') {
        throw E.markdownOutOfMemory(pageUrl, HTML_WORKER_HEAP_MB);
      }
      if (err.kind === 'aborted') throw err.reason ?? err;
      throw E.markdownFailed(pageUrl, err.message);
    }
    throw err;
  }
}
