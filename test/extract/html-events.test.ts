// readHtml must report what htmlparser2's own Parser reports (HTML mode,
// entities left as written) for the elements the extractor reads: the same
// start tags with the same attributes, the same end tags (implied ones
// included), the same text and comments. Each document is read both ways
// and the two event lists compared.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Parser } from 'htmlparser2';
import { readHtml } from '../../src/extract/html-events.ts';
import { prng } from '../support/prng.ts';

const ELEMENTS = new Set(['a', 'form', 'input', 'img', 'link', 'meta', 'script', 'style', 'title', 'svg', 'td', 'base']);

type Event = string;

/** Consecutive text joined, empty text dropped: how text arrives in pieces is not part of the contract. */
function normalise(events: Event[]): Event[] {
  const out: Event[] = [];
  for (const e of events) {
    if (e === 'text ') continue;
    const last = out[out.length - 1];
    if (e.startsWith('text ') && last?.startsWith('text ')) out[out.length - 1] = last + e.slice(5);
    else out.push(e);
  }
  return out;
}

function viaParser(html: string): Event[] {
  const events: Event[] = [];
  new Parser({
    onopentag(name, attribs) {
      if (ELEMENTS.has(name)) events.push(`open ${name} ${JSON.stringify(attribs)}`);
      else if (Object.hasOwn(attribs, 'style')) events.push(`open ${name} ${JSON.stringify({ style: attribs.style })}`);
    },
    onclosetag: (name) => void events.push(`close ${name}`),
    ontext: (text) => void events.push(`text ${text}`),
    oncomment: (data) => void events.push(`comment ${data}`),
  }, { decodeEntities: false }).end(html);
  return normalise(events);
}

function viaReadHtml(html: string): Event[] {
  const events: Event[] = [];
  readHtml(html, {
    onopentag: (name, attribs) => void events.push(`open ${name} ${JSON.stringify(attribs)}`),
    onclosetag: (name) => void events.push(`close ${name}`),
    wantsText: () => true,
    ontext: (text) => void events.push(`text ${text}`),
    oncomment: (data) => void events.push(`comment ${data}`),
  }, ELEMENTS);
  return normalise(events);
}

const CASES: Record<string, string> = {
  'attributes: case, duplicates, no value, unquoted, entities': '<A HREF="/x" href="/y" Data-X=1 checked rel=nofollow title=\'t&amp;u\'>x</a><IMG SRC=/i.png>',
  'style on an element not read, first of two': '<div STYLE="background:url(/bg.png)" style="x">t</div><span class=c>no style</span>',
  'a form inside a form is ignored, with its attributes': '<form action="/a"><input formaction="/f"><form action="/b" style="s"><input name=q></form><input formaction="/g"></form>',
  'implied end tags: p, li, td, headings, a': '<p>one<p>two<div>x</div><ul><li>a<li>b</ul><table><tr><td>1<td>2<tr><td>3</table><h1>h<h2>i</h2><a href=1>a<a href=2>b</a>',
  'an end tag closes what is open inside it': '<div><form action="/x"><input><span><a href="/in">in</div><a href="/out">out</a>',
  '</p> with no p open, and </br>': '</p>text</br><p>x</p></p>',
  'svg: self-closing, adjusted names, a title and an a inside': '<svg><a xlink:href="/s"/><title>svg title</title><foreignObject><p>html<img src=/x></foreignObject><clipPath/></svg><title>page</title>',
  'math and its integration points': '<math><mi>x</mi><mtext><a href="/m">m</a></mtext></math>',
  '<image> is an img outside SVG only': '<image src="/a.png"><svg><image href="/b.png"/></svg>',
  'raw text: script, style, title, textarea': '<script>if (a<b) x = "</div>";</script><style>a{b:url(/c)}</style><title>a <b> c</title><textarea><a href=/no></textarea>',
  'comments, conditional comments and CDATA': '<!-- http://a.example/x --><!--[if IE]><link href=/ie.css><![endif]--><![CDATA[not html]]><svg><![CDATA[in svg]]></svg>',
  'unclosed elements at the end': '<html><body><form action=/u><title>never closed',
  'a start tag cut off at the end': '<p>text<a href="/cut',
  'void elements are closed at once': '<br><hr><meta name=robots content=noindex><link rel=canonical href=/c><base href=/b/><input type=image src=/i>',
  'doctype and processing instructions are not events': '<!DOCTYPE html><?xml version="1.0"?><html lang=en><a href=/x>x</a></html>',
};

describe('readHtml reports what htmlparser2\'s Parser reports', () => {
  for (const [name, html] of Object.entries(CASES)) {
    it(name, () => {
      assert.deepEqual(viaReadHtml(html), viaParser(html));
    });
  }

  it('on every HTML document of the link-extraction fixtures', () => {
    const dir = join(import.meta.dirname, '..', 'fixtures', 'conformance', 'links', 'heritrix');
    const files = readdirSync(dir).filter((f) => /\.html?$/.test(f));
    assert.ok(files.length >= 30, `${files.length} fixtures in ${dir}`);
    for (const f of files) {
      const html = readFileSync(join(dir, f), 'utf8');
      assert.deepEqual(viaReadHtml(html), viaParser(html), f);
    }
  });

  it('on 2,000 generated documents of tag soup', () => {
    const random = prng(20261126);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const names = ['a', 'A', 'p', 'div', 'form', 'FORM', 'input', 'img', 'image', 'svg', 'math', 'mi', 'foreignObject', 'title', 'script', 'style', 'td', 'tr',
      'table', 'li', 'ul', 'h1', 'br', 'link', 'meta', 'span', 'textarea', 'clippath', 'base', 'select', 'option'];
    const attrs = ['href="/x"', 'HREF=/y', 'style="color:red"', 'STYLE=a', 'checked', 'src=\'/s\'', 'href="/d" href="/e"', 'rel=nofollow', 'a=&amp;b', 'title="a>b"', 'x=\'y"z\''];
    for (let doc = 0; doc < 2000; doc++) {
      let html = '';
      const parts = 5 + Math.floor(random() * 30);
      for (let i = 0; i < parts; i++) {
        const r = random();
        const n = pick(names);
        if (r < 0.45) html += `<${n}${random() < 0.6 ? ` ${pick(attrs)}` : ''}${random() < 0.3 ? ` ${pick(attrs)}` : ''}${random() < 0.1 ? '/' : ''}>`;
        else if (r < 0.75) html += `</${n}>`;
        else if (r < 0.9) html += pick(['text', ' a < b ', '&amp;', 'x>y', '\n']);
        else html += pick(['<!-- c -->', '<![CDATA[d]]>', '<!--[if IE]><a href=/c>c</a><![endif]-->', '<!doctype html>', '<?pi x?>', '<!x y>']);
      }
      // Documents cut off inside a token: the tokenizer's skip to the next `<`, `>` or quote runs off the end.
      if (random() < 0.3) html += pick(['<!-- open comment', '<a href="/open', "<img src='/open", '<script>var s = "</scr', '<style>a{}', '<?pi', '<!x', '<title>t', 'tail text']);
      assert.deepEqual(viaReadHtml(html), viaParser(html), html);
    }
  });
});
