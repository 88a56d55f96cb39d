#!/usr/bin/env python3
"""Writes three more GitHub REST responses beside github_issues.json, generated to the response
schemas GitHub publishes (github/rest-api-description, api.github.com.json), every field the
real API returns in its order and types, for the GitHub preset's recorded answers
(tests/proxy/record_presets.py serves them as GitHub's API):

- github_pulls.json: GET /repos/{owner}/{repo}/pulls?state=all (schema "pull-request-simple":
  head and base each carry a whole "repository" of ~80 keys), the first 12 also in the
  single pull request's form (schema "pull-request": merged, mergeable, additions, …) under
  "full";
- github_commits.json: GET /repos/{owner}/{repo}/commits (schema "commit": the git commit,
  its verification, the GitHub users, the parents);
- github_repos_search.json: GET /search/repositories (schema "repo-search-result-item").

Deterministic (seeded): `python3 examples/data/gen_github_more.py` rewrites the same files.
The users are github_issues.json's (synthetic logins); no real user's data. Licence: the
generated files are part of this repository (MIT OR Apache-2.0).
"""
import datetime, json, os, random

rng = random.Random(20261207)
HERE = os.path.dirname(os.path.abspath(__file__))
API, WEB = "https://api.github.com", "https://github.com"
OWNER, REPO = "acme-dev", "fluxgate"
ISSUES = json.load(open(os.path.join(HERE, "github_issues.json")))
USERS = {}
for issue in ISSUES:
    for u in [issue["user"]] + issue["assignees"]:
        USERS[u["login"]] = u
LOGINS = sorted(USERS)
LABELS = {l["name"]: l for i in ISSUES for l in i["labels"]}
MILESTONES = {m["title"]: m for i in ISSUES for m in [i["milestone"]] if m}
WORDS = ("storage engine compaction flush segment writer reader cache eviction shard replica leader "
         "follower snapshot checksum parser flag cli output json yaml toml linux macos arm64 build "
         "linker feature crate version upgrade latency throughput memory allocation").split()
BASE = datetime.datetime(2026, 11, 30, 12, 0, 0)


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def sha():
    return "".join(rng.choice("0123456789abcdef") for _ in range(40))


def repository(owner, name, rid, description, language, stars, created, pushed, topics, license):
    full = f"{owner['login']}/{name}"
    u = f"{API}/repos/{full}"
    return {
        "id": rid, "node_id": f"R_kgDO{rid:08d}", "name": name, "full_name": full, "private": False,
        "owner": owner, "html_url": f"{WEB}/{full}", "description": description, "fork": False, "url": u,
        "forks_url": f"{u}/forks", "keys_url": f"{u}/keys{{/key_id}}",
        "collaborators_url": f"{u}/collaborators{{/collaborator}}", "teams_url": f"{u}/teams",
        "hooks_url": f"{u}/hooks", "issue_events_url": f"{u}/issues/events{{/number}}",
        "events_url": f"{u}/events", "assignees_url": f"{u}/assignees{{/user}}",
        "branches_url": f"{u}/branches{{/branch}}", "tags_url": f"{u}/tags",
        "blobs_url": f"{u}/git/blobs{{/sha}}", "git_tags_url": f"{u}/git/tags{{/sha}}",
        "git_refs_url": f"{u}/git/refs{{/sha}}", "trees_url": f"{u}/git/trees{{/sha}}",
        "statuses_url": f"{u}/statuses/{{sha}}", "languages_url": f"{u}/languages",
        "stargazers_url": f"{u}/stargazers", "contributors_url": f"{u}/contributors",
        "subscribers_url": f"{u}/subscribers", "subscription_url": f"{u}/subscription",
        "commits_url": f"{u}/commits{{/sha}}", "git_commits_url": f"{u}/git/commits{{/sha}}",
        "comments_url": f"{u}/comments{{/number}}", "issue_comment_url": f"{u}/issues/comments{{/number}}",
        "contents_url": f"{u}/contents/{{+path}}", "compare_url": f"{u}/compare/{{base}}...{{head}}",
        "merges_url": f"{u}/merges", "archive_url": f"{u}/{{archive_format}}{{/ref}}",
        "downloads_url": f"{u}/downloads", "issues_url": f"{u}/issues{{/number}}",
        "pulls_url": f"{u}/pulls{{/number}}", "milestones_url": f"{u}/milestones{{/number}}",
        "notifications_url": f"{u}/notifications{{?since,all,participating}}",
        "labels_url": f"{u}/labels{{/name}}", "releases_url": f"{u}/releases{{/id}}",
        "deployments_url": f"{u}/deployments", "created_at": iso(created),
        "updated_at": iso(pushed + datetime.timedelta(hours=3)), "pushed_at": iso(pushed),
        "git_url": f"git://github.com/{full}.git", "ssh_url": f"git@github.com:{full}.git",
        "clone_url": f"{WEB}/{full}.git", "svn_url": f"{WEB}/{full}", "homepage": None,
        "size": rng.randint(800, 90000), "stargazers_count": stars, "watchers_count": stars,
        "language": language, "has_issues": True, "has_projects": True, "has_downloads": True,
        "has_wiki": False, "has_pages": False, "has_discussions": rng.choice([True, False]),
        "forks_count": stars // 9, "mirror_url": None, "archived": stars % 13 == 0, "disabled": False,
        "open_issues_count": rng.randint(0, 140),
        "license": None if license is None else {
            "key": license.lower(), "name": {"MIT": "MIT License", "Apache-2.0": "Apache License 2.0",
                                             "GPL-3.0": "GNU General Public License v3.0"}[license],
            "spdx_id": license, "url": f"{API}/licenses/{license.lower()}", "node_id": "MDc6TGljZW5zZTEz"},
        "allow_forking": True, "is_template": False, "web_commit_signoff_required": False,
        "topics": topics, "visibility": "public", "forks": stars // 9,
        "open_issues": rng.randint(0, 140), "watchers": stars, "default_branch": "main",
    }


ORG = dict(USERS[LOGINS[0]], login=OWNER, id=90210011, node_id="O_kgDOBWB0Gw", type="Organization",
           html_url=f"{WEB}/{OWNER}", url=f"{API}/users/{OWNER}")
HOME = repository(ORG, REPO, 611500233, "An embedded log-structured storage engine", "Rust", 4210,
                  datetime.datetime(2023, 2, 14, 9, 30), BASE, ["storage", "database", "rust"], "Apache-2.0")


def paragraph(n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


TITLES = ["Split compaction into levels", "Fix flush ordering on shutdown", "Add `--since` to `fluxgate log`",
          "Bump tokio from 1.41 to 1.42", "Document retention settings", "Speed up checksum verification",
          "Handle long segment names on Windows", "Expose snapshot progress in metrics",
          "Retry with max_backoff", "Refactor the reader cache", "Support TOML includes", "CI: test on arm64"]
pulls, full = [], []
for k in range(15):
    number = 1413 - k * 2
    author = USERS[LOGINS[k % len(LOGINS)]]
    created = BASE - datetime.timedelta(days=k * 2, hours=rng.randint(0, 23))
    updated = created + datetime.timedelta(hours=rng.randint(2, 60))
    state = "closed" if k % 4 == 1 else "open"
    merged = state == "closed" and k % 8 != 5
    closed_at = iso(updated) if state == "closed" else None
    branch = TITLES[k % len(TITLES)].lower().replace("`", "").replace(" ", "-")[:28].strip("-")
    head_repo = HOME if k % 3 else repository(author, REPO, 700000000 + k, "A fork of fluxgate", "Rust", 0,
                                               created - datetime.timedelta(days=30), updated, [], "Apache-2.0")
    head_sha, base_sha = sha(), sha()
    u = f"{API}/repos/{OWNER}/{REPO}"
    labels = [LABELS[n] for n in rng.sample(sorted(LABELS), rng.choice([0, 1, 1, 2]))]
    assignees = [USERS[l] for l in rng.sample(LOGINS, rng.choice([0, 1, 1, 2]))]
    reviewers = [USERS[l] for l in rng.sample(LOGINS, rng.choice([0, 1, 2]))]
    milestone = rng.choice([None, None] + sorted(MILESTONES.values(), key=lambda m: m["number"]))
    title = TITLES[k % len(TITLES)] + ("" if k < len(TITLES) else f" ({k // len(TITLES) + 1})")
    pull = {
        "url": f"{u}/pulls/{number}", "id": 2150000000 + number * 131, "node_id": f"PR_kwDOJ{number:010d}",
        "html_url": f"{WEB}/{OWNER}/{REPO}/pull/{number}", "diff_url": f"{WEB}/{OWNER}/{REPO}/pull/{number}.diff",
        "patch_url": f"{WEB}/{OWNER}/{REPO}/pull/{number}.patch", "issue_url": f"{u}/issues/{number}",
        "number": number, "state": state, "locked": False, "title": title, "user": author,
        "body": f"{paragraph(rng.randint(15, 60))}\n\nCloses #{number - 1}.\n\n- [x] tests\n- [ ] docs",
        "created_at": iso(created), "updated_at": iso(updated), "closed_at": closed_at,
        "merged_at": closed_at if merged else None, "merge_commit_sha": sha(),
        "assignee": assignees[0] if assignees else None, "assignees": assignees,
        "requested_reviewers": reviewers, "requested_teams": [], "labels": labels, "milestone": milestone,
        "draft": k % 6 == 2, "commits_url": f"{u}/pulls/{number}/commits",
        "review_comments_url": f"{u}/pulls/{number}/comments", "review_comment_url": f"{u}/pulls/comments{{/number}}",
        "comments_url": f"{u}/issues/{number}/comments", "statuses_url": f"{u}/statuses/{head_sha}",
        "head": {"label": f"{head_repo['owner']['login']}:{branch}", "ref": branch, "sha": head_sha,
                 "user": head_repo["owner"], "repo": head_repo},
        "base": {"label": f"{OWNER}:main", "ref": "main", "sha": base_sha, "user": ORG, "repo": HOME},
        "_links": {k2: {"href": v} for k2, v in [
            ("self", f"{u}/pulls/{number}"), ("html", f"{WEB}/{OWNER}/{REPO}/pull/{number}"),
            ("issue", f"{u}/issues/{number}"), ("comments", f"{u}/issues/{number}/comments"),
            ("review_comments", f"{u}/pulls/{number}/comments"), ("review_comment", f"{u}/pulls/comments{{/number}}"),
            ("commits", f"{u}/pulls/{number}/commits"), ("statuses", f"{u}/statuses/{head_sha}")]},
        "author_association": rng.choice(["MEMBER", "CONTRIBUTOR", "NONE"]), "auto_merge": None,
        "active_lock_reason": None,
    }
    pulls.append(pull)
    if k < 6:
        additions, deletions = rng.randint(1, 900), rng.randint(0, 400)
        full.append(dict(pull, **{
            "merged": merged, "mergeable": None if state == "closed" else rng.choice([True, False]),
            "rebaseable": None if state == "closed" else True,
            "mergeable_state": "unknown" if state == "closed" else rng.choice(["clean", "dirty", "blocked"]),
            "merged_by": USERS[LOGINS[0]] if merged else None, "comments": rng.randint(0, 12),
            "review_comments": rng.randint(0, 30), "maintainer_can_modify": k % 3 == 0,
            "commits": rng.randint(1, 14), "additions": additions, "deletions": deletions,
            "changed_files": rng.randint(1, 25)}))

commits = []
parent = sha()
for k in range(40):
    s, login = sha(), LOGINS[(k * 5) % len(LOGINS)]
    who = USERS[login]
    when = BASE - datetime.timedelta(hours=k * 9 + rng.randint(0, 5))
    name = login.replace("-", " ").title()
    person = {"name": name, "email": f"{login}@users.noreply.github.com", "date": iso(when)}
    subject = rng.choice(["fix", "feat", "docs", "refactor", "perf", "test"]) + ": " + paragraph(rng.randint(4, 9)).lower().rstrip(".")
    message = subject + (f" (#{1413 - k * 2})" if k % 2 == 0 else "") + "\n\n" + paragraph(rng.randint(10, 40))
    commits.append({
        "sha": s, "node_id": f"C_kwDOJ{s[:20]}",
        "commit": {"author": person, "committer": dict(person, name="GitHub", email="noreply@github.com"),
                   "message": message, "tree": {"sha": sha(), "url": f"{API}/repos/{OWNER}/{REPO}/git/trees/{s}"},
                   "url": f"{API}/repos/{OWNER}/{REPO}/git/commits/{s}", "comment_count": rng.choice([0, 0, 1]),
                   "verification": {"verified": k % 3 != 1, "reason": "valid" if k % 3 != 1 else "unsigned",
                                    "signature": None if k % 3 == 1 else "-----BEGIN PGP SIGNATURE-----\n\nwsFcBAABCAAQBQJn" + sha() + "\n-----END PGP SIGNATURE-----\n",
                                    "payload": None if k % 3 == 1 else f"tree {sha()}\nparent {parent}\nauthor {name} <{login}@users.noreply.github.com> 1764000000 +0000\n\n{subject}\n",
                                    "verified_at": None if k % 3 == 1 else iso(when)}},
        "url": f"{API}/repos/{OWNER}/{REPO}/commits/{s}", "html_url": f"{WEB}/{OWNER}/{REPO}/commit/{s}",
        "comments_url": f"{API}/repos/{OWNER}/{REPO}/commits/{s}/comments",
        "author": who, "committer": {"login": "web-flow", "id": 19864447, "node_id": "MDQ6VXNlcjE5ODY0NDQ3",
                                     "avatar_url": "https://avatars.githubusercontent.com/u/19864447?v=4",
                                     "gravatar_id": "", "url": f"{API}/users/web-flow", "html_url": f"{WEB}/web-flow",
                                     "type": "User", "site_admin": False},
        "parents": [{"sha": parent, "url": f"{API}/repos/{OWNER}/{REPO}/commits/{parent}",
                     "html_url": f"{WEB}/{OWNER}/{REPO}/commit/{parent}"}],
    })
    parent = s

repos = []
for k in range(25):
    owner = USERS[LOGINS[k % len(LOGINS)]] if k % 4 else ORG
    name = rng.choice(["flux", "log", "seg", "kv", "tide", "ember"]) + rng.choice(["gate", "store", "db", "ment", "cask", "table"]) + ("" if k < 6 else f"-{k}")
    r = repository(owner, name, 500000000 + k * 7013, paragraph(rng.randint(5, 14)),
                   rng.choice(["Rust", "Go", "C++", "Zig", None]), rng.choice([3, 41, 260, 1900, 12000]) + k,
                   BASE - datetime.timedelta(days=400 + k * 30), BASE - datetime.timedelta(days=k * 3),
                   rng.sample(["storage", "database", "lsm", "embedded", "kv", "rust", "wal"], rng.randint(0, 4)),
                   rng.choice(["MIT", "Apache-2.0", "GPL-3.0", None]))
    r["score"] = 1.0
    repos.append(r)

for name, value in [("github_pulls.json", {"list": pulls, "full": full}), ("github_commits.json", commits),
                    ("github_repos_search.json", {"total_count": 2417, "incomplete_results": False, "items": repos})]:
    path = os.path.join(HERE, name)
    with open(path, "w") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {path}: {os.path.getsize(path)} bytes")
