"""Lucene's English analysis in Python: the terms Pyserini's default analyzer makes.

Anserini 0.22.1's DefaultEnglishAnalyzer is Lucene's StandardTokenizer, EnglishPossessiveFilter,
LowerCaseFilter, the 33 English stop words and PorterStemFilter. The embedded BM25
(:mod:`trecqr.retrieval.bm25`) and RM3 (:mod:`trecqr.generative.rm3`) analyse with
:class:`Analyzer`, so that their terms are Lucene's: token for token on every text measured
(the TREC Session 2013 results, the QReCC demo passages, the QReCC questions and rewrites;
tests/generative/test_retrieval_sim_lucene.py compares with the real analyzer).

- lowercase char by char, as Java does (no final sigma);
- tokens follow Lucene's UAX#29 grammar: letters and digits joined across ``. ' ’ ‘ : ·``
  between letters and ``. , ; '`` between digits (``don't``, ``u.s``, ``3.14``, ``1,000`` stay
  whole); ``_`` joins; soft hyphens and combining marks stay inside a word; ``½ ² ¾`` are not
  word characters; one token per ideograph or hiragana; katakana and Thai/Lao/Myanmar/Khmer
  runs are one token; emoji and symbols such as ``© ® ™`` are tokens;
- a trailing possessive ``'s`` is dropped; stop words are removed;
- Lucene's Porter stemmer (:func:`porter_stem`, Martin Porter's C version: words of 1-2 letters
  are not stemmed, ``logi`` -> ``log``, ``bli`` -> ``ble``; PyStemmer's and Snowball's
  ``porter`` are the original algorithm, which differs on these).

Not reproduced: the character classes come from Python's Unicode data, not Lucene's (Unicode 9),
so characters assigned since may differ; the 255-char token limit; a soft hyphen or mark just
before a joiner; a leading ZWJ or ``_`` followed by marks; characters that are both letters and
emoji (``ℹ``); the Hebrew quote rules.

Speed: text made only of ASCII, Latin letters and ordinary punctuation (most English text) goes
through a short regular expression on Python's fast word class; anything else through the full
grammar, built once per process (about 0.1 s) when first needed. Stems are cached per token.
"""

from __future__ import annotations

import re
import unicodedata

# The analyzer's name in a bm25s index manifest. "lucene-english-porter" (no version) was the
# first one (PyStemmer's original Porter, a simpler tokenizer): its terms differ (us -> u).
ANALYZER_ID = "lucene-english-porter/2"
# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split())

# Lucene's StandardTokenizer (UAX#29 word breaks; Unicode 9 word-break data, Unicode 11 emoji
# data), rebuilt as one regular expression. Letters, digits and Extend/Format characters come from
# unicodedata categories; the other classes are the code points Lucene's grammar gives them.
# Ideographs (Han) and hiragana are one token per character; katakana runs and runs of South-East
# Asian letters (Thai, Lao, Myanmar, Khmer, ...) are one token each; emoji are tokens.
_HAN = ("\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff"
        "\uf900-\ufaff\U00020000-\U0003ffff")
_HIRAGANA = "\u3041-\u3096\u309d-\u309f\U0001b001-\U0001b11f\U0001b150-\U0001b152\U0001f200"
_KATAKANA = ("\u3031-\u3035\u309b\u309c\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\u32d0-\u32fe"
             "\u3300-\u3357\uff66-\uff9d\U0001b000\U0001b164-\U0001b167")
_SEA = ("\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u1950-\u1aaf\ua9e0-\ua9ff\uaa60-\uaadf"
        "\U00011700-\U0001174f")
_EMOJI = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u231a\u231b\u2328\u2388"
          "\u23cf\u23e9-\u23f3\u23f8-\u23fa\u24c2\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe"
          "\u2600-\u2605\u2607-\u2612\u2614-\u2685\u2690-\u2705\u2708-\u2712\u2714\u2716\u271d"
          "\u2721\u2728\u2733\u2734\u2744\u2747\u274c\u274e\u2753-\u2755\u2757\u2763-\u2767"
          "\u2795-\u2797\u27a1\u27b0\u27bf\u2934\u2935\u2b05-\u2b07\u2b1b\u2b1c\u2b50\u2b55\u3030"
          "\u303d\u3297\u3299\U0001f000-\U0001f0ff\U0001f10d-\U0001f10f\U0001f12f"
          "\U0001f16c-\U0001f171\U0001f17e\U0001f17f\U0001f18e\U0001f191-\U0001f19a"
          "\U0001f1ad-\U0001f1e5\U0001f201-\U0001f20f\U0001f21a\U0001f22f\U0001f232-\U0001f23a"
          "\U0001f23c-\U0001f23f\U0001f249-\U0001f53d\U0001f546-\U0001f64f\U0001f680-\U0001f6ff"
          "\U0001f774-\U0001f77f\U0001f7d5-\U0001f7ff\U0001f80c-\U0001f80f\U0001f848-\U0001f84f"
          "\U0001f85a-\U0001f85f\U0001f888-\U0001f88f\U0001f8ae-\U0001f8ff\U0001f90c-\U0001f93a"
          "\U0001f93c-\U0001f945\U0001f947-\U0001fffd")
_EMOJI_MODIFIER = "\U0001f3fb-\U0001f3ff"
_EXTEND_NUM_LET = "_\u202f\u203f\u2040\u2054\ufe33\ufe34\ufe4d-\ufe4f\uff3f"
_MID_NUM_LET = ".'\u2018\u2019\u2024\ufe52\uff07\uff0e"
_MID_LETTER = ":\u00b7\u0387\u05f4\u2027\ufe13\ufe55\uff1a" + _MID_NUM_LET
_MID_NUM = (",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b"
            + _MID_NUM_LET)
_token_findall = None
# Text made only of ASCII, Latin letters and punctuation that is neither a token character, a
# joiner (.:'’ between letters), an extender (soft hyphen, marks) nor an emoji (© ®): for it the
# full expression reduces to this one, on Python's fast \w (about 5x faster).
_SIMPLE_TEXT = re.compile("[\x00-\xa8\xaa-\xac\xaf-\xb1\xb4-\xb8\xba\xbb\xbf-\u024f\u1e00-\u1eff"
                          "\u2010-\u2023\u2025\u2026\u2030-\u203b\u203d\u203e\u2041-\u2043"
                          "\u2045-\u2048\u204a-\u2053\u2055-\u205e]*").fullmatch
_SIMPLE_TOKEN = re.compile(r"_*[^\W_]\w*(?:(?:(?<=[^\W\d_])[.:'·‘’](?=[^\W\d_])"
                           r"|(?<=\d)[.,;'‘’](?=\d))\w+)*").findall


def _char_class(cps) -> str:
    """The body of a regex character class holding the sorted code points cps (as ranges)."""
    runs = []
    for c in cps:
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b)))
                   for a, b in runs)


def _tokenizer():
    """findall of the token regex (built once, ~0.1 s: one pass over the code points)."""
    global _token_findall
    if _token_findall is None:
        cat = unicodedata.category
        special = re.compile(f"[{_HAN}{_HIRAGANA}{_KATAKANA}{_SEA}]").match
        letters, digits, extend = [], [], []
        for c in [*range(0x40000), *range(0xE0000, 0xE1000)]:  # the planes with such characters
            ch = chr(c)
            k = cat(ch)
            if k[0] == "L" or k == "Nl":  # ALetter (no "No": ½ ² are not word characters)
                if not special(ch):
                    letters.append(c)
            elif k == "Nd":
                digits.append(c)
            elif k in ("Mn", "Mc", "Me", "Cf") and c != 0x200B:  # Extend, Format, ZWJ (WB4)
                extend.append(c)
        extend += range(0x1F3FB, 0x1F400)  # emoji skin-tone modifiers extend too
        L, D, X = _char_class(sorted(letters)), _char_class(digits), _char_class(sorted(extend))
        U = _EXTEND_NUM_LET
        mid = (f"(?:(?<=[{L}])[{re.escape(_MID_LETTER)}][{X}]*(?=[{L}])"
               f"|(?<=[{D}])[{re.escape(_MID_NUM)}][{X}]*(?=[{D}]))")
        _token_findall = re.compile("|".join([
            f"[{U}]*[{L}{D}][{L}{D}{X}{U}]*(?:{mid}[{L}{D}{X}{U}]+)*",  # words and numbers
            f"[{U}]*[{_KATAKANA}][{_KATAKANA}{X}{U}]*",
            f"[{_HAN}{_HIRAGANA}][{X}]*",
            f"[{_SEA}][{_SEA}{X}]*",
            f"[{_EMOJI}][{X}{_EMOJI_MODIFIER}]*(?:(?<=\u200d)[{_EMOJI}][{X}{_EMOJI_MODIFIER}]*)*",
            "[\U0001f1e6-\U0001f1ff]{2}",  # flags
        ])).findall
    return _token_findall


_POSSESSIVE = re.compile(r"['’＇][sS]$")
_VC = re.compile("[aeiou][^aeiou]")
_V = re.compile("[aeiou]")


def _cv(w):
    """w with each y spelt as the vowel a or the consonant b, as Porter's cons() reads it."""
    if "y" not in w:
        return w
    out = []
    cons = True
    for i, ch in enumerate(w):
        if ch == "y":
            cons = i == 0 or not cons
            out.append("b" if cons else "a")
        else:
            cons = ch not in "aeiou"
            out.append(ch)
    return "".join(out)



def _m(t, end):
    """Porter's measure m of t[:end] (the number of vowel-consonant sequences)."""
    return len(_VC.findall(t, 0, end))



def _cvc(w, t, i):
    """Porter's cvc(i): consonant-vowel-consonant ending at i, the last not w, x or y."""
    return (i >= 2 and w[i] not in "wxy" and t[i] not in "aeiou" and t[i - 1] in "aeiou"
            and t[i - 2] not in "aeiou")



_STEP3 = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
_STEP4 = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
_STEP5 = {
    "a": ("al",), "c": ("ance", "ence"), "e": ("er",), "i": ("ic",), "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"), "o": ("ion", "ou"), "s": ("ism",), "t": ("ate", "iti"),
    "u": ("ous",), "v": ("ive",), "z": ("ize",),
}



def _replace_suffix(w, t, rules) -> tuple:
    """(w, t) after the first rule (suffix, replacement) whose suffix ends w: replaced when the
    stem before it has m > 0 (Porter's r() in steps 2 and 3 of the C version)."""
    for suf, rep in rules:
        if w.endswith(suf):
            j = len(w) - len(suf)
            if _m(t, j):
                w = w[:j] + rep
                t = _cv(w)
            break
    return w, t


def porter_stem(w: str) -> str:
    """Lucene's PorterStemmer (Martin Porter's C version, release 3) on a lowercase word: words
    of one or two characters are left alone; step 2 has the C version's ``bli`` -> ``ble`` and
    ``logi`` -> ``log``."""
    if len(w) <= 2:
        return w
    t = _cv(w)
    # step 1
    if w[-1] == "s":
        if w.endswith("sses") or w.endswith("ies"):
            w = w[:-2]
            t = t[:-2]
        elif w[-2] != "s":
            w = w[:-1]
            t = t[:-1]
    if w.endswith("eed"):
        if _m(t, len(w) - 3):
            w = w[:-1]
            t = t[:-1]
    else:
        n = 2 if w.endswith("ed") else 3 if w.endswith("ing") else 0
        if n and _V.search(t, 0, len(w) - n):
            w = w[:-n]
            t = _cv(w)
            if w.endswith(("at", "bl", "iz")):
                w += "e"
                t += "e"
            elif len(w) > 1 and w[-1] == w[-2] and t[-1] not in "aeiou":
                if w[-1] not in "lsz":
                    w = w[:-1]
                    t = t[:-1]
            elif _cvc(w, t, len(w) - 1) and _m(t, len(w)) == 1:
                w += "e"
                t += "e"
    # step 2 (1c)
    if w[-1] == "y" and _V.search(t, 0, len(w) - 1):
        w = w[:-1] + "i"
        t = t[:-1] + "i"
    # step 3 (rules chosen by the penultimate letter), step 4 (by the last)
    if len(w) > 1:
        w, t = _replace_suffix(w, t, _STEP3.get(w[-2], ()))
    w, t = _replace_suffix(w, t, _STEP4.get(w[-1], ()))
    # step 5
    if len(w) > 1:
        for suf in _STEP5.get(w[-2], ()):
            if w.endswith(suf):
                j = len(w) - len(suf)
                if suf == "ion" and not (j > 0 and w[j - 1] in "st"):
                    break  # ("ou" cannot match then)
                if _m(t, j) > 1:
                    w = w[:j]
                    t = t[:j]
                break
    # step 6
    if w[-1] == "e":
        a = _m(t, len(w))
        if a > 1 or (a == 1 and not _cvc(w, t, len(w) - 2)):
            w = w[:-1]
            t = t[:-1]
    if (w[-1] == "l" and len(w) > 1 and w[-2] == "l" and _m(t, len(w)) > 1):
        w = w[:-1]
    return w


def _tokens_of(lower: str) -> list:
    """The tokens of lowercased text: the short expression on simple text, else the grammar."""
    return _SIMPLE_TOKEN(lower) if _SIMPLE_TEXT(lower) else _tokenizer()(lower)


class Analyzer:
    """Lowercase, tokenise, drop possessives and stop words, Porter-stem (with a cache)."""

    def __init__(self):
        self._cache = {}
        self.known_chunks = {}  # chunk -> its terms (chunk_terms' cache)

    def __call__(self, text: str) -> list:
        return [term for term in map(self.term, self.tokens(text)) if term]

    def tokens(self, text: str) -> list:
        """The tokens of text, lowercased as Lucene does, before stop words and stemming
        (``[t for t in map(self.term, self.tokens(x)) if t] == self(x)``)."""
        return _tokens_of(self.lower(text))

    @staticmethod
    def lower(text: str) -> str:
        """text lowercased as Java does, char by char (what tokens() reads)."""
        if "Σ" in text or "İ" in text:
            return text.replace("Σ", "σ").replace("İ", "i").lower()
        return text.lower()

    def chunk_terms(self, chunk: str) -> tuple:
        """The index terms of a lowercased chunk of text without white space, cached.

        No token spans white space, so a text's terms are its white-space-separated chunks'
        terms, in order; a collection repeats its chunks, and each is analysed once."""
        terms = self.known_chunks.get(chunk)
        if terms is None:
            terms = tuple(t for t in map(self.term, _tokens_of(chunk)) if t)
            if len(self.known_chunks) < 2_000_000:
                self.known_chunks[chunk] = terms
        return terms

    def term(self, tok: str) -> str:
        """The index term of a token ("" for a stop word)."""
        stem = self._cache.get(tok)
        if stem is None:
            word = _POSSESSIVE.sub("", tok)
            stem = "" if (not word or word in LUCENE_STOPWORDS) else porter_stem(word)
            if len(self._cache) < 2_000_000:
                self._cache[tok] = stem
        return stem


def analyze(text: str) -> list:
    """The index terms of a text (see the module docstring)."""
    return Analyzer()(text)
