"""Writes the tokenizer benchmark's text: ~1 MB (1,000,000 bytes, cut at a character boundary)
of mixed English prose, code, CJK and emoji, deterministic (seeded), varied enough that a
per-word cache does not reduce it to a handful of words.
    python3 benches/tokenize_text.py OUT.txt [BYTES]
"""
import random
import sys

rng = random.Random(14)
SYL = ["ta", "ne", "ri", "so", "ka", "lo", "mi", "ve", "du", "pe", "sha", "tor", "in", "ex",
       "qu", "ab", "str", "on", "ly", "ing", "ed", "er", "tion", "pre", "con"]
COMMON = ("the of and to in is that for it as with was on be by this are from at or an have not "
          "which but all they were can there their more one when will would model token file "
          "weights layer tensor vocabulary people time year world").split()
EMOJI = ["😀", "🚀", "🎉", "👍🏽", "❤️", "🇯🇵", "🤖", "🧠", "👨‍👩‍👧", "✨", "🔥", "☕"]
KW = ["fn", "let", "mut", "if", "else", "for", "while", "return", "struct", "impl", "def",
      "class", "import", "const", "self", "None", "true", "false"]


def word():
    if rng.random() < 0.6:
        return rng.choice(COMMON)
    return "".join(rng.choice(SYL) for _ in range(rng.randint(1, 4)))


def prose():
    out = []
    for _ in range(rng.randint(3, 8)):
        s = [word() for _ in range(rng.randint(5, 18))]
        s[0] = s[0].capitalize()
        if rng.random() < 0.3:
            s.insert(rng.randint(0, len(s)), str(rng.randint(0, 99999)))
        if rng.random() < 0.2:
            s.insert(rng.randint(0, len(s)), "don't" if rng.random() < 0.5 else "it's")
        out.append(" ".join(s) + rng.choice([".", ".", "!", "?", ";", ":"]))
    return " ".join(out) + "\n\n"


def code():
    lines = []
    ind = 0
    for _ in range(rng.randint(4, 12)):
        k = rng.choice(KW)
        name = "_".join(word() for _ in range(rng.randint(1, 3)))
        expr = f"{name}({rng.randint(0, 4096)}, \"{word()}\") + {rng.random():.3f}"
        lines.append(" " * ind + f"{k} {name} = {expr};" + ("  // " + word() if rng.random() < 0.3 else ""))
        ind = max(0, min(12, ind + rng.choice([-4, 0, 0, 4])))
    return "\n".join(lines) + "\n\n"


def cjk():
    s = []
    for _ in range(rng.randint(20, 80)):
        r = rng.random()
        if r < 0.7:
            s.append(chr(rng.randint(0x4E00, 0x4E00 + 3000)))  # common-ish Han
        elif r < 0.85:
            s.append(chr(rng.randint(0x3041, 0x3093)))  # hiragana
        elif r < 0.95:
            s.append(chr(rng.randint(0xAC00, 0xAC00 + 500)))  # hangul
        else:
            s.append(rng.choice("，。、！？"))
    return "".join(s) + "\n"


def emoji():
    return " ".join(rng.choice(EMOJI) + (word() if rng.random() < 0.5 else "")
                    for _ in range(rng.randint(3, 10))) + "\n"


def main():
    out, size = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    parts, n = [], 0
    kinds = [prose] * 5 + [code] * 3 + [cjk] * 2 + [emoji]
    while n < size:
        p = rng.choice(kinds)().encode()
        parts.append(p)
        n += len(p)
    data = b"".join(parts)[:size]
    data = data.decode("utf-8", "ignore").encode()  # no character cut in half at the end
    with open(out, "wb") as f:
        f.write(data)


main()
