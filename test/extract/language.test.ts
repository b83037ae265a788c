// Language detection for focused crawls.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectLanguage, htmlText, primaryLanguage } from '../../src/extract/language.ts';

describe('language detection', () => {
  it('takes the declared language first', () => {
    assert.equal(primaryLanguage('en-US'), 'en');
    assert.equal(primaryLanguage('nb'), 'nb');
    assert.equal(primaryLanguage('deu'), 'de');
    assert.equal(primaryLanguage('x'), undefined);
    assert.equal(detectLanguage({ lang: 'fr-CA', text: 'This text is English but the page says French.' }), 'fr');
    assert.equal(detectLanguage({ contentLanguage: 'de, en', text: '' }), 'de');
  });
  it('guesses from the text otherwise', () => {
    assert.equal(detectLanguage({ text: htmlText('<p>The quick brown fox jumps over the lazy dog while the children watch from the window of the old house.</p>') }), 'en');
    assert.equal(detectLanguage({ text: 'Der schnelle braune Fuchs springt über den faulen Hund, während die Kinder aus dem Fenster des alten Hauses zusehen.' }), 'de');
    assert.equal(detectLanguage({ text: 'Le renard brun rapide saute par-dessus le chien paresseux pendant que les enfants regardent par la fenêtre de la vieille maison.' }), 'fr');
    assert.equal(detectLanguage({ text: 'hi' }), undefined);
  });
  it('reads only the visible text of HTML', () => {
    assert.equal(htmlText('<html><head><style>p{}</style><script>var x = "<p>";</script></head><body><p>Hello&nbsp;world</p><!-- note --></body></html>'), 'Hello world');
  });
});
