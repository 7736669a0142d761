"""``import minddata`` stays light: the text ops' libraries (jieba, sentencepiece, regex, fontTools) load
only when an op that needs them is built or run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = "{'jieba', 'sentencepiece', 'regex', 'fontTools'}"


def _loaded(code: str) -> str:
    script = f"import sys\n{code}\nprint(sorted({LIBRARIES} & {{m.split('.')[0] for m in sys.modules}}))"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_minddata_loads_neither_the_text_ops_nor_their_libraries():
    out = _loaded("import minddata\nassert 'minddata.text' not in sys.modules, 'minddata.text was imported'")
    assert out == "[]"


def test_building_text_ops_that_need_no_library_loads_none():
    code = (
        "from minddata import text\n"
        "text.WhitespaceTokenizer(); text.BertTokenizer(text.Vocab.from_list(['a'])); text.CaseFold()\n"
        "text.SentencePieceVocab(b'')"
    )
    assert _loaded(code) == "[]"


def test_a_tokenizer_loads_its_library_when_it_first_runs():
    code = "from minddata import text\nop = text.UnicodeScriptTokenizer()\nop('abc 中文')"
    assert _loaded(code) == "['fontTools']"
