// A fetched HTML page as readable Markdown: the main content (Readability, falling back to <main>/<article>/<body>),
// every link and image made absolute against the page's URL (or its <base>).
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface PageMarkdown {
  title: string | null;
  markdown: string;
}

// Elements that carry no readable content, or content a model should not mistake for the page's own.
const DROPPED = 'script, style, noscript, template, iframe, object, embed, canvas, svg, link, meta';
// Page chrome, dropped before Readability too: on short pages it keeps menus and footers as content.
const CHROME = 'nav, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true], [hidden]';
// A <header> is chrome at page level but holds the title inside an article.
const PAGE_HEADER = 'header';
// Readability gives up (throws) past this many elements; the fallback then handles the page.
const MAX_ELEMENTS = 20_000;

/* The DOM here is linkedom's; the project compiles without the DOM lib, so its nodes are typed loosely. */
interface LooseElement {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  replaceWith(...nodes: unknown[]): void;
  querySelectorAll(selectors: string): Iterable<LooseElement>;
  querySelector(selectors: string): LooseElement | null;
  closest(selectors: string): LooseElement | null;
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

/** `href` resolved against `base`; null for schemes a reader cannot follow (javascript:, data:, …). */
function absolute(href: string, base: string, schemes: readonly string[]): string | null {
  try {
    const url = new URL(href.trim(), base);
    return schemes.includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function absolutizeLinks(doc: LooseDocument, base: string): void {
  for (const a of doc.querySelectorAll('a[href]')) {
    const href = absolute(a.getAttribute('href') ?? '', base, ['http:', 'https:', 'mailto:']);
    if (href === null) a.removeAttribute('href');
    else a.setAttribute('href', href);
  }
  for (const img of doc.querySelectorAll('img')) {
    const src = absolute(img.getAttribute('src') ?? '', base, ['http:', 'https:']);
    // An image without a fetchable source (data: URIs can be megabytes) is kept as its alt text only.
    if (src === null) img.replaceWith(doc.createTextNode(img.getAttribute('alt') ?? ''));
    else {
      img.setAttribute('src', src);
      img.removeAttribute('srcset');
    }
  }
}

function baseOf(doc: LooseDocument, pageUrl: string): string {
  const declared = doc.querySelector('base[href]')?.getAttribute('href');
  if (!declared) return pageUrl;
  return absolute(declared, pageUrl, ['http:', 'https:']) ?? pageUrl;
}

function fallbackContent(doc: LooseDocument): string {
  const root = doc.querySelector('main, article, [role=main]') ?? doc.body ?? doc.documentElement;
  return root.innerHTML;
}

function readableContent(html: string): { title: string | null; content: string } | null {
  // Readability rewrites the document it reads, so it gets its own parse.
  const { document } = parseHTML(html);
  try {
    const article = new Readability(document, { maxElemsToParse: MAX_ELEMENTS, keepClasses: false }).parse();
    if (!article?.content || (article.textContent ?? '').trim() === '') return null;
    return { title: article.title || null, content: article.content };
  } catch {
    return null;
  }
}

function turndown(): TurndownService {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
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

/** Converts a page to Markdown; `pageUrl` is the URL it was finally fetched from (after redirects). */
export function htmlToMarkdown(html: string, pageUrl: string): PageMarkdown {
  const { document } = parseHTML(html) as unknown as { document: LooseDocument };
  for (const el of [...document.querySelectorAll(DROPPED)]) el.remove();
  for (const el of [...document.querySelectorAll(CHROME)]) el.remove();
  for (const el of [...document.querySelectorAll(PAGE_HEADER)]) if (!el.closest('main, article, [role=main]')) el.remove();
  absolutizeLinks(document, baseOf(document, pageUrl));
  const cleaned = document.documentElement.outerHTML;
  const title = document.title?.trim() || null;

  const article = readableContent(cleaned);
  const content = article?.content ?? fallbackContent(document);
  const markdown = turndown()
    .turndown(content)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title: article?.title?.trim() || title, markdown };
}
