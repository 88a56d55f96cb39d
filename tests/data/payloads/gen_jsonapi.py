#!/usr/bin/env python3
"""Writes jsonapi_articles.json: a JSON:API 1.1 compound document (a page of articles with
their authors and comments included), in the form the specification's own examples use
(https://jsonapi.org/format/: resource objects with `type`, `id`, `attributes`,
`relationships` holding resource linkage and `links`, top-level `links` for pagination,
`included`, `meta`). Deterministic (seeded); synthetic text, no real person's data.
`python3 tests/data/payloads/gen_jsonapi.py` rewrites the same file.
"""
import json, random, datetime, os

rng = random.Random(20261206)
BASE = "https://api.example.com"
WORDS = ("cache invalidation latency replica shard index query planner vacuum checkpoint "
         "compaction segment bloom filter tombstone snapshot isolation deadlock retry backoff "
         "quorum leader election lease fencing token clock skew").split()
PEOPLE = [("Dan", "Gebhardt", "dgeb"), ("Mara", "Quist", "mquist"), ("Ilse", "Brandt", "ibrandt"),
          ("Tomás", "Ferreira", "tferreira"), ("Yuki", "Sato", "ysato"), ("Ngozi", "Eze", "neze")]

def sentence(n):
    words = [rng.choice(WORDS) for _ in range(n)]
    return (" ".join(words)).capitalize() + "."

def ts(day, minute):
    t = datetime.datetime(2026, 9, 1, 8, 0, 0, tzinfo=datetime.timezone.utc)
    t += datetime.timedelta(days=day, minutes=minute, seconds=rng.randrange(60), microseconds=rng.randrange(1000000))
    return t.isoformat().replace("+00:00", "Z")

people = []
for i, (first, last, twitter) in enumerate(PEOPLE):
    pid = str(9 + i)
    people.append({"type": "people", "id": pid,
                   "attributes": {"firstName": first, "lastName": last, "twitter": twitter},
                   "links": {"self": f"{BASE}/people/{pid}"}})

articles, comments = [], []
cid = 100
for a in range(25):
    aid = str(1 + a)
    author = rng.choice(people)["id"]
    mine = []
    for _ in range(rng.randrange(0, 4)):
        cid += 1
        commenter = rng.choice(people)["id"]
        comments.append({"type": "comments", "id": str(cid),
                         "attributes": {"body": sentence(rng.randrange(6, 20)), "created": ts(a, 60 + cid)},
                         "relationships": {"author": {"data": {"type": "people", "id": commenter}}},
                         "links": {"self": f"{BASE}/comments/{cid}"}})
        mine.append({"type": "comments", "id": str(cid)})
    articles.append({
        "type": "articles", "id": aid,
        "attributes": {"title": sentence(rng.randrange(3, 8)).rstrip("."),
                       "body": " ".join(sentence(rng.randrange(8, 18)) for _ in range(rng.randrange(1, 4))),
                       "created": ts(a, 0), "updated": ts(a, rng.randrange(1, 3000))},
        "relationships": {
            "author": {"links": {"self": f"{BASE}/articles/{aid}/relationships/author",
                                 "related": f"{BASE}/articles/{aid}/author"},
                       "data": {"type": "people", "id": author}},
            "comments": {"links": {"self": f"{BASE}/articles/{aid}/relationships/comments",
                                   "related": f"{BASE}/articles/{aid}/comments"},
                         "data": mine}},
        "links": {"self": f"{BASE}/articles/{aid}"}})

doc = {"jsonapi": {"version": "1.1"},
       "links": {"self": f"{BASE}/articles?page[number]=1&page[size]=25",
                 "next": f"{BASE}/articles?page[number]=2&page[size]=25",
                 "last": f"{BASE}/articles?page[number]=4&page[size]=25"},
       "meta": {"totalPages": 4},
       "data": articles,
       "included": people + comments}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jsonapi_articles.json")
with open(path, "w") as f:
    json.dump(doc, f, indent=2, ensure_ascii=False)
    f.write("\n")
