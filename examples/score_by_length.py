"""A stand-in for your own judge: reads the items `evalkit judge export` wrote and adds a `score_judge` field to
each (here the reply's word count; put your model's score there).

    python examples/score_by_length.py to_score.jsonl scored.jsonl
"""
import json
import sys


def main(source: str, target: str) -> None:
    with open(source, encoding="utf-8") as items, open(target, "w", encoding="utf-8") as scored:
        for line in items:
            item = json.loads(line)
            item["score_judge"] = float(len(item["response"].split()))  # your judge's score of this reply
            scored.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
