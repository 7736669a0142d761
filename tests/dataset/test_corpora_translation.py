"""IWSLT2016, IWSLT2017 and Multi30k on files written here in WIT3's and Multi30k's layouts: tags
files with talk metadata lines, XML dev/test sets, and line-aligned language files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corpora_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

DE = ["Vielen Dank, Chris.", "Es ist mir wirklich eine Ehre.", "Ich bin wirklich begeistert."]
EN = ["Thank you so much, Chris.", "And it's truly a great honor.", "I have been blown away."]


def tags_file(lines: list[str], lang: str) -> str:
    # WIT3's train.tags: metadata of each talk on tag lines, then its sentences one per line.
    head = (
        "<url>http://www.ted.com/talks/al_gore_on_averting_climate_crisis.html</url>\n"
        f"<keywords>talks, climate</keywords>\n<speaker>Al Gore</speaker>\n<talkid>1</talkid>\n"
        f"<title>Al Gore: Averting the climate crisis ({lang})</title>\n"
        f"<description>TED Talk Subtitles and Transcript ({lang})</description>\n"
    )
    return head + "".join(f" {line}\n" for line in lines)


def xml_file(docs: list[list[str]], lang: str, set_name: str) -> str:
    body = ""
    for d, segs in enumerate(docs):
        body += f'<doc docid="{d}" genre="lectures">\n<url>http://www.ted.com/talks/{d}</url>\n'
        body += f"<description>talk {d}</description>\n<talkid>{d}</talkid>\n<title>Talk {d}</title>\n"
        body += "".join(f'<seg id="{k + 1}"> {s} </seg>\n' for k, s in enumerate(segs))
        body += "</doc>\n"
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<srcset setid="iwslt2016-{set_name}" srclang="{lang}">\n'
        f"{body}</srcset>\n</mteval>\n"
    )


def write_iwslt(folder: Path, prefix: str, src: str, tgt: str, sets: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = {src: DE, tgt: EN}
    for lang in (src, tgt):
        (folder / f"train.tags.{src}-{tgt}.{lang}").write_text(tags_file(text[lang], lang), encoding="utf-8")
        for n, set_name in enumerate(sets):
            docs = [[f"{s} [{set_name} {n}]" for s in text[lang][:2]], [f"{text[lang][2]} [{set_name}]"]]
            (folder / f"{prefix}.TED.{set_name}.{src}-{tgt}.{lang}.xml").write_text(
                xml_file(docs, lang, set_name), encoding="utf-8"
            )


@pytest.fixture
def iwslt2016(tmp_path: Path) -> Path:
    write_iwslt(
        tmp_path / "texts" / "de" / "en" / "de-en", "IWSLT16", "de", "en", ["tst2013", "tst2014", "dev2010"]
    )
    (tmp_path / "subeval_files").mkdir()
    return tmp_path


def test_iwslt2016_train_pairs_skip_metadata(iwslt2016: Path) -> None:
    ds = md.IWSLT2016Dataset(str(iwslt2016), usage="train", shuffle=False)
    assert ds.get_col_names() == ["text", "translation"]
    assert rows(ds) == list(zip(DE, EN))


def test_iwslt2016_valid_reads_xml_segments(iwslt2016: Path) -> None:
    got = rows(md.IWSLT2016Dataset(str(iwslt2016), usage="valid", shuffle=False))
    assert got == [
        ("Vielen Dank, Chris. [tst2013 0]", "Thank you so much, Chris. [tst2013 0]"),
        ("Es ist mir wirklich eine Ehre. [tst2013 0]", "And it's truly a great honor. [tst2013 0]"),
        ("Ich bin wirklich begeistert. [tst2013]", "I have been blown away. [tst2013]"),
    ]


def test_iwslt2016_test_set_and_valid_set_choose_files(iwslt2016: Path) -> None:
    got = rows(md.IWSLT2016Dataset(str(iwslt2016), usage="test", test_set="dev2010", shuffle=False))
    assert all("[dev2010" in text for text, _ in got)
    everything = rows(md.IWSLT2016Dataset(str(iwslt2016), shuffle=False))
    assert len(everything) == 9


def test_iwslt2016_shards_partition_rows(iwslt2016: Path) -> None:
    assert_shards_partition(lambda **kw: md.IWSLT2016Dataset(str(iwslt2016), shuffle=False, **kw), 2)


def test_iwslt2016_resumes_exactly(iwslt2016: Path) -> None:
    assert_resumes_exactly(lambda w: md.IWSLT2016Dataset(str(iwslt2016), num_shards=2, shard_id=0))


def test_iwslt2016_missing_file(iwslt2016: Path) -> None:
    os.remove(iwslt2016 / "texts" / "de" / "en" / "de-en" / "IWSLT16.TED.tst2014.de-en.en.xml")
    with pytest.raises(
        DataFormatError, match=r"IWSLT2016Dataset: .*IWSLT16\.TED\.tst2014\.de-en\.en\.xml is missing"
    ):
        md.IWSLT2016Dataset(str(iwslt2016), usage="test")


def test_iwslt2016_rejects_unknown_pair(iwslt2016: Path) -> None:
    with pytest.raises(ArgumentError, match=r"IWSLT2016Dataset: `language_pair` must be one of"):
        md.IWSLT2016Dataset(str(iwslt2016), language_pair=("de", "fr"))


def test_iwslt_unequal_segments_is_an_error(iwslt2016: Path) -> None:
    folder = iwslt2016 / "texts" / "de" / "en" / "de-en"
    (folder / "IWSLT16.TED.tst2013.de-en.en.xml").write_text(xml_file([["one"], ["two"]], "en", "tst2013"))
    with pytest.raises(DataFormatError, match=r"<doc> 0 has 2 <seg> element\(s\) in .* but 1 in"):
        rows(md.IWSLT2016Dataset(str(iwslt2016), usage="valid"))


@pytest.fixture
def iwslt2017(tmp_path: Path) -> Path:
    folder = tmp_path / "texts" / "DeEnItNlRo" / "DeEnItNlRo" / "DeEnItNlRo-DeEnItNlRo"
    write_iwslt(folder, "IWSLT17", "de", "en", ["dev2010", "tst2010"])
    return tmp_path


def test_iwslt2017_usage_all(iwslt2017: Path) -> None:
    got = rows(md.IWSLT2017Dataset(str(iwslt2017), shuffle=False))
    assert sorted(got) == sorted(
        list(zip(DE, EN))
        + [
            (f"{d} [{s} {n}]", f"{e} [{s} {n}]")
            for n, s in enumerate(["dev2010", "tst2010"])
            for d, e in zip(DE[:2], EN[:2])
        ]
        + [(f"{DE[2]} [{s}]", f"{EN[2]} [{s}]") for s in ["dev2010", "tst2010"]]
    )


def test_iwslt2017_resumes(iwslt2017: Path) -> None:
    assert_resumes_exactly(lambda w: md.IWSLT2017Dataset(str(iwslt2017), usage="all"))


def test_iwslt2017_missing_pair(iwslt2017: Path) -> None:
    with pytest.raises(DataFormatError, match=r"IWSLT2017Dataset: .*train\.tags\.it-ro\.it is missing"):
        md.IWSLT2017Dataset(str(iwslt2017), language_pair=["it", "ro"], usage="train")


@pytest.fixture
def multi30k(tmp_path: Path) -> Path:
    stems = {"training/train": 5, "validation/val": 2, "mmt16_task1_test/test": 3}
    for stem, n in stems.items():
        (tmp_path / stem).parent.mkdir(exist_ok=True)
        (tmp_path / f"{stem}.en").write_text("".join(f"Two young guys {stem} {k}.\n" for k in range(n)))
        (tmp_path / f"{stem}.de").write_text("".join(f"Zwei junge Männer {stem} {k}.\n" for k in range(n)))
    return tmp_path


def test_multi30k_pairs_and_language_pair(multi30k: Path) -> None:
    en_de = rows(md.Multi30kDataset(str(multi30k), usage="valid", shuffle=False))
    assert en_de == [
        (f"Two young guys validation/val {k}.", f"Zwei junge Männer validation/val {k}.") for k in range(2)
    ]
    de_en = rows(md.Multi30kDataset(str(multi30k), usage="valid", language_pair=["de", "en"], shuffle=False))
    assert de_en == [(b, a) for a, b in en_de]


@pytest.mark.parametrize(("usage", "count"), [("train", 5), ("valid", 2), ("test", 3), ("all", 10)])
def test_multi30k_usage(multi30k: Path, usage: str, count: int) -> None:
    assert len(rows(md.Multi30kDataset(str(multi30k), usage=usage))) == count


def test_multi30k_shards_partition_rows(multi30k: Path) -> None:
    assert_shards_partition(lambda **kw: md.Multi30kDataset(str(multi30k), shuffle=False, **kw), 3)


def test_multi30k_resumes_exactly(multi30k: Path) -> None:
    assert_resumes_exactly(lambda w: md.Multi30kDataset(str(multi30k), num_shards=3, shard_id=1))


def test_multi30k_missing_language_file(multi30k: Path) -> None:
    os.remove(multi30k / "mmt16_task1_test" / "test.de")
    with pytest.raises(DataFormatError, match=r"Multi30kDataset: .*mmt16_task1_test/test\.de is missing"):
        md.Multi30kDataset(str(multi30k), usage="test")


def test_multi30k_unaligned_files(multi30k: Path) -> None:
    (multi30k / "training" / "train.de").write_text("nur eine Zeile\n")
    with pytest.raises(DataFormatError, match=r"train\.de has fewer lines than .*train\.en"):
        rows(md.Multi30kDataset(str(multi30k), usage="train"))
