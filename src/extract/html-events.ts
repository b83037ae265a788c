/**
 * The events extractHtml reads from an HTML document: htmlparser2's
 * Tokenizer driven as htmlparser2's own Parser drives it in HTML mode (the
 * same element stack, implied end tags, foreign content and quirks), but
 * with the attributes of most elements never made into strings.
 *
 * Why not htmlparser2's Parser itself: it makes every attribute of every
 * element into a lower-cased name and a value in a new object, and slices
 * out every run of text, and the extractor reads the attributes of a few
 * elements and the text of three. Those strings made the Parser with a
 * handler that does nothing cost far more than the Tokenizer with the
 * element stack kept as here, and a large part of what extraction cost
 * (bench/README.md, *Where the time goes*, CPU of the extract worker, and
 * *Link extraction, measured*). The tokenizing, which is the hard part, is still htmlparser2's.
 *
 * What the handler sees, against the Parser's events:
 * - `onopentag` for an element named in `elements`, with all its attributes;
 *   for any other element only when it has a `style` attribute, with that
 *   one alone. Names are lower case, duplicate attributes keep the first
 *   value, values are as written (entities are not decoded: the Parser's
 *   `decodeEntities: false`).
 * - `onclosetag` for every element closed, implied or not, and for every
 *   element still open at the end, as the Parser reports them.
 * - `ontext` only while `wantsText()` says so.
 * - `oncomment` once per comment, with CDATA outside foreign content given
 *   as `[CDATA[…]]`, as the Parser gives it.
 */
import { Tokenizer, type QuoteType, type TokenizerCallbacks } from 'htmlparser2';

export interface HtmlEvents {
  onopentag(name: string, attribs: Record<string, string>): void;
  onclosetag(name: string): void;
  wantsText(): boolean;
  ontext(text: string): void;
  oncomment(data: string): void;
}

// The tables below are htmlparser2's (Parser.ts), for HTML mode.
const P = new Set(['p']);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const FORM_TAGS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const TABLE_SECTIONS = new Set(['thead', 'tbody']);
const DDT = new Set(['dd', 'dt']);
const RTP = new Set(['rt', 'rp']);
/** An element's start tag closes the open elements in its set first, innermost first. */
const OPEN_IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>([
  ['tr', new Set(['tr', 'th', 'td'])], ['th', new Set(['th'])], ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])], ['a', new Set(['a'])], ['li', new Set(['li'])],
  ['p', P], ['h1', HEADINGS], ['h2', HEADINGS], ['h3', HEADINGS], ['h4', HEADINGS], ['h5', HEADINGS], ['h6', HEADINGS],
  ['select', FORM_TAGS], ['input', FORM_TAGS], ['output', FORM_TAGS], ['button', FORM_TAGS], ['datalist', FORM_TAGS], ['textarea', FORM_TAGS],
  ['option', new Set(['option'])], ['optgroup', new Set(['optgroup', 'option'])], ['dd', DDT], ['dt', DDT],
  ...['address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'header', 'hr',
    'main', 'nav', 'ol', 'pre', 'section', 'table', 'ul'].map((name): [string, ReadonlySet<string>] => [name, P]),
  ['rt', RTP], ['rp', RTP], ['tbody', TABLE_SECTIONS], ['tfoot', TABLE_SECTIONS],
]);
const VOID = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta',
  'param', 'source', 'track', 'wbr']);
/** Elements that hold HTML inside SVG or MathML (SVG-adjusted names). */
const INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignObject', 'desc', 'title']);
const SVG_NAMES = new Map(['altGlyph', 'altGlyphDef', 'altGlyphItem', 'animateColor', 'animateMotion', 'animateTransform', 'clipPath', 'feBlend',
  'feColorMatrix', 'feComponentTransfer', 'feComposite', 'feConvolveMatrix', 'feDiffuseLighting', 'feDisplacementMap', 'feDistantLight',
  'feDropShadow', 'feFlood', 'feFuncA', 'feFuncB', 'feFuncG', 'feFuncR', 'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode', 'feMorphology',
  'feOffset', 'fePointLight', 'feSpecularLighting', 'feSpotLight', 'feTile', 'feTurbulence', 'foreignObject', 'glyphRef', 'linearGradient',
  'radialGradient', 'textPath'].map((n) => [n.toLowerCase(), n]));

const HTML = 0;
const SVG = 1;
const MATHML = 2;

const TOKENIZER_OPTIONS = { decodeEntities: false } as const;

/** The Tokenizer's own fields that fastForwardTo reads (private in its typings). */
interface TokenizerScan {
  buffer: string;
  offset: number;
  index: number;
}

/**
 * htmlparser2's Tokenizer with one method replaced: `fastForwardTo`, which
 * skips to the next occurrence of a character (text up to `<`, an attribute
 * value up to its quote, a comment or a script body up to its end), walks
 * the buffer one `charCodeAt` at a time. `String.prototype.indexOf` does
 * the same search natively, several characters at a step; in a crawl the
 * loop was a large share of the extract worker's CPU (bench/README.md,
 * *What changed*, a8289c8). Same contract as the original: the index moves to the
 * character and the call returns true, or to the buffer's last character
 * and returns false. html-events.test.ts checks every event against
 * htmlparser2's Parser, which keeps the original loop.
 */
class ScanningTokenizer extends Tokenizer {}
if (typeof (Tokenizer.prototype as unknown as { fastForwardTo?: unknown }).fastForwardTo === 'function') {
  (ScanningTokenizer.prototype as unknown as { fastForwardTo(this: TokenizerScan, c: number): boolean }).fastForwardTo = function (c) {
    const at = this.buffer.indexOf(String.fromCharCode(c), this.index + 1 - this.offset);
    if (at >= 0) {
      this.index = at + this.offset;
      return true;
    }
    this.index = this.buffer.length + this.offset - 1;
    return false;
  };
}
const NO_ELEMENT = '';

/** `style`, any case, at buf[start, end). */
function isStyle(buf: string, start: number, end: number): boolean {
  return end - start === 5 && (buf.charCodeAt(start) | 0x20) === 0x73 && (buf.charCodeAt(start + 1) | 0x20) === 0x74 && (buf.charCodeAt(start + 2) | 0x20) === 0x79
    && (buf.charCodeAt(start + 3) | 0x20) === 0x6c && (buf.charCodeAt(start + 4) | 0x20) === 0x65;
}

class EventParser implements TokenizerCallbacks {
  private readonly buf: string;
  /** Open elements, innermost last. */
  private readonly stack: string[] = [];
  /** HTML, SVG or MATHML for each element that changes it, innermost last; the document's HTML first. */
  private readonly context: number[] = [HTML];
  /** The element whose start tag is being read; NO_ELEMENT for a start tag the Parser ignores (a form in a form). */
  private tagname = NO_ELEMENT;
  private attribs: Record<string, string> | undefined;
  /** The style attribute of an element whose other attributes are not wanted. */
  private style: string | undefined;
  private nameStart = 0;
  private nameEnd = 0;
  private valueStart = -1;
  private valueEnd = 0;

  private readonly events: HtmlEvents;
  private readonly elements: ReadonlySet<string>;

  constructor(buf: string, events: HtmlEvents, elements: ReadonlySet<string>) {
    this.buf = buf;
    this.events = events;
    this.elements = elements;
  }

  isInForeignContext(): boolean {
    return this.context[this.context.length - 1] !== HTML;
  }

  private readTagName(start: number, end: number): string {
    const name = this.buf.slice(start, end).toLowerCase();
    const ctx = this.context[this.context.length - 1];
    if (ctx === SVG) return SVG_NAMES.get(name) ?? name;
    if (this.context.length > 1) {
      // The end tag of an SVG element inside an HTML integration point (</foreignObject> in its own content).
      const adjusted = SVG_NAMES.get(name);
      if (adjusted !== undefined && this.stack.includes(adjusted)) return adjusted;
    }
    if (ctx === HTML) return name === 'image' ? 'img' : name;
    return name;
  }

  private emitOpenTag(name: string): void {
    this.tagname = name;
    this.attribs = undefined;
    this.style = undefined;
    // HTML ignores a form start tag while a form is open.
    if (name === 'form' && this.stack.includes('form')) {
      this.tagname = NO_ELEMENT;
      return;
    }
    const implied = OPEN_IMPLIES_CLOSE.get(name);
    if (implied) while (this.stack.length > 0 && implied.has(this.stack[this.stack.length - 1]!)) this.popElement();
    if (!VOID.has(name)) {
      this.stack.push(name);
      if (name === 'svg') this.context.push(SVG);
      else if (name === 'math') this.context.push(MATHML);
      else if (INTEGRATION.has(name)) this.context.push(HTML);
    }
    if (this.elements.has(name)) this.attribs = {};
  }

  private endOpenTag(): void {
    const name = this.tagname;
    if (name === NO_ELEMENT) return;
    if (this.attribs) this.events.onopentag(name, this.attribs);
    else if (this.style !== undefined) this.events.onopentag(name, { style: this.style });
    this.attribs = undefined;
    this.style = undefined;
    if (VOID.has(name)) this.events.onclosetag(name);
    this.tagname = NO_ELEMENT;
  }

  private popElement(): void {
    const name = this.stack.pop()!;
    if (name === 'svg' || name === 'math' || INTEGRATION.has(name)) this.context.pop();
    this.events.onclosetag(name);
  }

  private closeCurrentTag(): void {
    const name = this.tagname;
    this.endOpenTag();
    if (name !== NO_ELEMENT && this.stack[this.stack.length - 1] === name) this.popElement();
  }

  onopentagname(start: number, end: number): void {
    this.emitOpenTag(this.readTagName(start, end));
  }

  onattribname(start: number, end: number): void {
    this.nameStart = start;
    this.nameEnd = end;
    this.valueStart = -1;
  }

  onattribdata(start: number, end: number): void {
    if (this.valueStart < 0) this.valueStart = start;
    this.valueEnd = end;
  }

  onattribentity(): void {
    // Not reported with decodeEntities off: references stay in the value as written.
  }

  onattribend(_quote: QuoteType): void {
    if (this.tagname === NO_ELEMENT) return;
    // The value is sliced out only when it is kept: most attributes of most elements are not read (`<p id=…>`).
    if (this.attribs) {
      const name = this.buf.slice(this.nameStart, this.nameEnd).toLowerCase();
      if (!Object.hasOwn(this.attribs, name)) this.attribs[name] = this.value();
    } else if (this.style === undefined && isStyle(this.buf, this.nameStart, this.nameEnd)) this.style = this.value();
  }

  private value(): string {
    return this.valueStart < 0 ? '' : this.buf.slice(this.valueStart, this.valueEnd);
  }

  onopentagend(): void {
    this.endOpenTag();
  }

  onselfclosingtag(): void {
    // HTML ignores the slash of a self-closing tag, except in SVG and MathML.
    if (this.isInForeignContext()) this.closeCurrentTag();
    else this.endOpenTag();
  }

  onclosetag(start: number, end: number): void {
    const name = this.readTagName(start, end);
    if (VOID.has(name)) {
      // </br> is a <br>; other void end tags are nothing.
      if (name === 'br') {
        if (this.elements.has(name)) this.events.onopentag(name, {});
        this.events.onclosetag(name);
      }
      return;
    }
    const at = this.stack.lastIndexOf(name);
    if (at >= 0) {
      while (this.stack.length > at) this.popElement();
    } else if (name === 'p') {
      // </p> with no p open is an empty p.
      this.emitOpenTag('p');
      this.closeCurrentTag();
    }
  }

  ontext(start: number, end: number): void {
    if (start < end && this.events.wantsText()) this.events.ontext(this.buf.slice(start, end));
  }

  ontextentity(codepoint: number): void {
    if (this.events.wantsText()) this.events.ontext(String.fromCodePoint(codepoint));
  }

  oncomment(start: number, end: number, offset: number): void {
    this.events.oncomment(this.buf.slice(start, end - offset));
  }

  oncdata(start: number, end: number, offset: number): void {
    const value = this.buf.slice(start, end - offset);
    if (this.isInForeignContext()) {
      if (this.events.wantsText()) this.events.ontext(value);
    } else this.events.oncomment(`[CDATA[${value}]]`);
  }

  ondeclaration(): void {}

  onprocessinginstruction(): void {}

  onend(): void {
    for (let i = this.stack.length - 1; i >= 0; i--) this.events.onclosetag(this.stack[i]!);
  }
}

/** Reads a whole HTML document into `events`; `elements` are those whose attributes the handler reads (lower case). */
export function readHtml(html: string, events: HtmlEvents, elements: ReadonlySet<string>): void {
  const tokenizer = new ScanningTokenizer(TOKENIZER_OPTIONS, new EventParser(html, events, elements));
  tokenizer.write(html);
  tokenizer.end();
}
