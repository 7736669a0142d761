"""The rows of the speech corpora fixtures, as plain data; imported by tests/audio/test_speech.py and by its
MindSpore run (which has no pytest)."""

from __future__ import annotations

import json


def _datasets(ds, root):
    return {
        "yesno": ds.YesNoDataset(f"{root}/yesno", shuffle=False),
        "lj": ds.LJSpeechDataset(f"{root}/lj", shuffle=False),
        "sc": ds.SpeechCommandsDataset(f"{root}/sc", shuffle=False),
        "sc_test": ds.SpeechCommandsDataset(f"{root}/sc", usage="test", shuffle=False),
        "sc_valid": ds.SpeechCommandsDataset(f"{root}/sc", usage="valid", shuffle=False),
        "sc_train": ds.SpeechCommandsDataset(f"{root}/sc", usage="train", shuffle=False),
        "gtzan": ds.GTZANDataset(f"{root}/gtzan", shuffle=False),
        "gtzan_train": ds.GTZANDataset(f"{root}/gtzan", usage="train", shuffle=False),
        "gtzan_valid": ds.GTZANDataset(f"{root}/gtzan", usage="valid", shuffle=False),
        "gtzan_test": ds.GTZANDataset(f"{root}/gtzan", usage="test", shuffle=False),
        "libritts": ds.LibriTTSDataset(f"{root}/libritts", shuffle=False),
        "libritts_dev": ds.LibriTTSDataset(f"{root}/libritts", usage="dev-clean", shuffle=False),
        "cmu": ds.CMUArcticDataset(f"{root}/cmu", shuffle=False),
        "cmu_slt": ds.CMUArcticDataset(f"{root}/cmu", name="slt", shuffle=False),
    }


def rows_of(ds, root) -> dict:
    out = {}
    for name, d in _datasets(ds, root).items():
        rows = []
        for r in d.create_dict_iterator(num_epochs=1, output_numpy=True):
            rows.append({k: [str(v.dtype)[:2] if v.dtype.kind == "U" else str(v.dtype), list(v.shape),
                             (v.round(6) if v.dtype.kind == "f" else v).tolist()] for k, v in r.items()})
        out[name] = sorted(rows, key=json.dumps)
    return out
