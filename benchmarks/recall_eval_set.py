"""A labelled set of questions about past conversations, to score how often recall finds the answer.

The conversations are generated (seeded, so every run writes the same bytes) in the shape Anton logs them: session
files of turns, each a user line and the lines that answered it (assistant text, a scratchpad call and its output).
A data analyst talks with the agent about offices, vendors, data sets and projects over many sessions. Each fact
worth asking about is said once, and each question is labelled with the turn that says it (its evidence). What makes
it hard, as real use does:

- distractors: the same subject comes back in other turns with other facts, and the same kind of fact is said of
  other subjects, so only a turn with both answers the question;
- the subject named in one turn and the fact said in the next ("the Lisbon office…" then "the rent there went up to
  4,200"): the question's words are spread over a turn and its neighbour;
- paraphrase: the question uses other forms of the words (migrate, migrated, migration) and a few of its words are
  nowhere in the evidence;
- question-style phrasing ("what did I say about…", "when did we…", "do you remember…"), and the common words of
  the conversation (data, chart, report, run) in every turn.

Two parts are made from disjoint subjects and facts: `TUNING` (seed 1), which recall's choices may be tuned on, and
`HELD_OUT` (seed 2), which nothing is ever tuned on: it only reports. `write_part` writes a part's session files and
returns its questions.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

TUNING = "tuning"
HELD_OUT = "held-out"
SEEDS = {TUNING: 1, HELD_OUT: 2}

# Subjects: a kind of subject and its names. Each part draws its names from its own half of each list.
SUBJECTS: dict[str, list[str]] = {
    "office": ["Lisbon", "Oslo", "Krakow", "Austin", "Nairobi", "Osaka", "Porto", "Denver", "Tallinn", "Bogota",
               "Dublin", "Lagos", "Seville", "Quito", "Bergen", "Hanoi"],
    "vendor": ["CoinGecko", "Stripe", "Twilio", "Mailgun", "Snowflake", "Segment", "Plaid", "Algolia", "Sentry",
               "Fivetran", "Mixpanel", "Zendesk", "Braintree", "Airtable", "Heroku", "Datadog"],
    "dataset": ["churn", "payroll", "shipments", "clickstream", "inventory", "returns", "signups", "refunds",
                "tickets", "leads", "invoices", "sessions", "orders", "reviews", "claims", "budgets"],
    "project": ["Falcon", "Heron", "Juniper", "Maple", "Orion", "Tundra", "Willow", "Cobalt", "Saffron", "Quartz",
                "Meridian", "Sparrow", "Basalt", "Cedar", "Nimbus", "Pebble"],
}  # fmt: skip
THE = {"office": "the {name} office", "vendor": "{name}", "dataset": "the {name} table", "project": "project {name}"}

# Facts: per kind of subject, (what is said, what is asked). {s} is the subject, {v} the value. A question asks with
# other word forms and a few words of its own; `spread` facts name their subject only in the turn before.
FACTS: dict[str, list[tuple[str, str, str]]] = {
    "office": [
        ("rent", "The monthly rent for {s} went up to {v} euros.", "how much is the rent of {s} now"),
        ("headcount", "{s} has {v} people on staff since the reorganisation.", "how many staff work at {s}"),
        ("wifi", "The wifi password at {s} was rotated to {v}.", "the new wifi password for {s}"),
        ("lease", "The lease of {s} ends in {v}; legal wants a renewal draft.", "when does the {s} lease end"),
        ("manager", "{v} is managing {s} from next quarter.", "who manages {s}"),
        ("heating", "The heating bill of {s} doubled to {v} over the winter.", "what did the heating cost at {s}"),
    ],
    "vendor": [
        ("limit", "{s} throttles us at {v} requests per minute on the current plan.", "what rate limit does {s} have"),
        ("price", "{s} raised its price to {v} dollars a month.", "how much does {s} charge per month"),
        ("key", "The API key for {s} expires on {v}, rotate it before then.", "when does the {s} API key expire"),
        ("outage", "{s} was down for {v} minutes during the nightly sync.", "how long was the {s} outage"),
        ("contact", "Our account manager at {s} is {v}.", "who is our contact at {s}"),
        ("contract", "The {s} contract renews automatically on {v}.", "when does the {s} contract renew"),
    ],
    "dataset": [
        ("rows", "{s} holds {v} million rows after the backfill.", "how many rows are in {s}"),
        ("nulls", "About {v} percent of customer_id is null in {s}.", "what share of {s} has missing customer ids"),
        ("owner", "{v} owns {s}; ask before changing its schema.", "who is the owner of {s}"),
        ("refresh", "{s} is refreshed every {v} hours by the loader.", "how often does {s} get refreshed"),
        ("dupes", "We found {v} duplicate keys in {s} and dropped them.", "how many duplicates did {s} contain"),
        ("migrate", "We migrated {s} to Postgres on {v}.", "when did we do the migration of {s} to postgres"),
    ],
    "project": [
        ("deadline", "The deadline for {s} moved to {v}.", "what is the new deadline of {s}"),
        ("budget", "{s} got a budget of {v} thousand for this year.", "how big is the budget for {s}"),
        ("lead", "{v} is leading {s} while Sam is away.", "who leads {s}"),
        ("accuracy", "The model in {s} reached {v} percent accuracy on the holdout.", "how accurate was the {s} model"),
        ("blocker", "{s} is blocked on {v} access from IT.", "what is blocking {s}"),
        ("launch", "{s} launched on {v} to the first customers.", "when did {s} launch"),
    ],
}  # fmt: skip
VALUES = {
    "rent": lambda r: f"{r.randrange(18, 90) * 100:,}", "headcount": lambda r: str(r.randrange(6, 240)),
    "wifi": lambda r: r.choice(["blue-otter-", "red-comet-", "green-fjord-"]) + str(r.randrange(10, 99)),
    "lease": lambda r: r.choice(["March", "June", "September", "December"]) + f" {r.randrange(2026, 2030)}",
    "manager": lambda r: r.choice(PEOPLE), "heating": lambda r: f"{r.randrange(8, 60) * 100:,} euros",
    "limit": lambda r: str(r.randrange(2, 60) * 10), "price": lambda r: str(r.randrange(5, 90) * 10),
    "key": lambda r: f"{r.randrange(1, 28)} {r.choice(['May', 'July', 'October'])}",
    "outage": lambda r: str(r.randrange(5, 180)), "contact": lambda r: r.choice(PEOPLE),
    "contract": lambda r: f"{r.randrange(1, 28)} {r.choice(['January', 'April', 'August'])}",
    "rows": lambda r: str(r.randrange(2, 900)), "nulls": lambda r: str(r.randrange(2, 40)),
    "owner": lambda r: r.choice(PEOPLE), "refresh": lambda r: str(r.choice([2, 4, 6, 12, 24])),
    "dupes": lambda r: f"{r.randrange(20, 9000):,}", "migrate": lambda r: f"{r.randrange(1, 28)} February",
    "deadline": lambda r: f"{r.randrange(1, 28)} {r.choice(['April', 'May', 'November'])}",
    "budget": lambda r: str(r.randrange(20, 900)), "lead": lambda r: r.choice(PEOPLE),
    "accuracy": lambda r: str(r.randrange(61, 97)), "blocker": lambda r: r.choice(["database", "VPN", "S3", "GPU"]),
    "launch": lambda r: f"{r.randrange(1, 28)} {r.choice(['March', 'June', 'October'])}",
}  # fmt: skip
PEOPLE = ["Priya", "Tomasz", "Amara", "Lucas", "Mei", "Jonas", "Fatima", "Diego", "Ines", "Kofi", "Hana", "Olaf"]

ASKING = [
    "what did I say about {q}?",
    "do you remember {q}?",
    "{q}?",
    "remind me {q}",
    "what did we find out about {q}?",
    "I think we talked about this before: {q}?",
    "can you look up {q}?",
]
ASKING_WHEN = ["when did we talk about {q}?", "what did I tell you about {q}?"]
SPREAD_OPENERS = [
    "Let's look at {s} for a bit.",
    "Next one is {s}, can you pull up what we have?",
    "Switching to {s} now.",
    "Ok, now {s}. Load the latest data first.",
]
SPREAD_LEADS = ["Right. ", "About that: ", "One thing there: ", "Also, for that one: ", ""]
ANAPHORA = {"office": "the office", "vendor": "the vendor", "dataset": "the table", "project": "the project"}
FILLER_USER = [
    "plot the {d} data as a bar chart by month", "rerun the report with the new data", "export the table to csv",
    "why is the chart empty?", "group the data by region and show the totals", "fix the date column and run it again",
    "what does this error mean?", "make the chart bigger and add a title", "summarise the results in three lines",
    "load the {d} data from the warehouse", "compare this month with last month", "check the data for missing values",
]  # fmt: skip
FILLER_ANSWER = [
    "Done. The chart shows the data by month; the last bar is partial.", "I reran the report; the totals match.",
    "The table is exported, 3 columns and the data looks clean.", "The data had no rows after the filter, fixed.",
    "Here are the totals by region; the report is updated.", "The error came from a missing column; it runs now.",
    "Summary: the numbers are stable, with a small dip in the data last week.",
]  # fmt: skip
CODE = [
    "df = pd.read_sql('select * from {d}', conn)\nprint(df.describe())",
    "chart = df.groupby('month').sum().plot(kind='bar')\nchart.figure.savefig('report.png')",
    "df.to_csv('export.csv', index=False)\nprint(len(df))",
]
SUBJECT_CHATTER = [  # the subject again, with no fact worth asking about (distractors)
    "Can you open the notes on {s} again?",
    "Add {s} to the weekly report.",
    "Is {s} in the dashboard yet?",
    "Send the {s} summary to Priya.",
    "We should look at {s} again next week.",
]


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[tuple[str, int], ...]  # (session, turn) of each turn that answers it
    kind: str  # "direct" (subject and fact in one turn) or "spread" (the subject in the turn before the fact)
    subject: str


def _fact_sentences(template: str, subject: str, kind: str, value: str) -> tuple[str, str]:
    """The fact with its subject named, and as said right after the subject was named ("the office" instead)."""
    named = template.format(s=subject, v=value)
    alone = template.format(s=ANAPHORA[kind], v=value)
    return named[0].upper() + named[1:], alone[0].upper() + alone[1:]


def _line(session: str, turn: int, role: str, content: str, moment: datetime, meta: dict[str, str]) -> str:
    return json.dumps(
        {"ts": moment.isoformat(), "session": session, "turn": turn, "role": role, "content": content, "meta": meta},
        ensure_ascii=False,
    )


class _SessionWriter:
    """The lines of one session, turn by turn."""

    def __init__(self, session: str, began: datetime, rng: random.Random) -> None:
        self.session, self.moment, self.rng = session, began, rng
        self.turn = 0
        self.lines: list[str] = []

    def say(self, user: str, answer: str, *, code: bool = False) -> int:
        """One turn: the user's line, a scratchpad call and its output when `code`, the answer; returns its number."""
        rng = self.rng
        self.turn += 1
        self.moment += timedelta(seconds=rng.randrange(20, 400))
        self.add("user", user, {})
        if code:
            dataset = rng.choice(SUBJECTS["dataset"])
            self.add("tool_call", str({"code": rng.choice(CODE).format(d=dataset)}), {"tool": "scratchpad"})
            self.add("tool_result", f"{rng.randrange(100, 99999)} rows, ok", {"tool": "scratchpad"})
        self.add("assistant", answer, {})
        return self.turn

    def add(self, role: str, content: str, meta: dict[str, str]) -> None:
        self.lines.append(_line(self.session, self.turn, role, content, self.moment, meta))

    def filler(self) -> None:
        rng = self.rng
        user = rng.choice(FILLER_USER).format(d=rng.choice(SUBJECTS["dataset"]))
        self.say(user, rng.choice(FILLER_ANSWER), code=rng.random() < 0.5)


def write_part(folder: Path, part: str, *, sessions: int = 40, turns_per_session: int = 36) -> list[Question]:
    """Write one part's session files into `folder` and return its labelled questions."""
    rng = random.Random(SEEDS[part])
    half = 0 if part == TUNING else 1
    subjects = [
        (kind, THE[kind].format(name=name))
        for kind, names in SUBJECTS.items()
        for name in names[half * len(names) // 2 : (half + 1) * len(names) // 2]
    ]
    facts = [(kind, subject, fact) for kind, subject in subjects for fact in FACTS[kind]]
    rng.shuffle(facts)
    per_session = max(1, len(facts) // sessions)
    folder.mkdir(parents=True, exist_ok=True)
    questions: list[Question] = []
    start = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
    for number in range(sessions):
        began = start + timedelta(days=number * 3, hours=rng.randrange(8))
        session = began.strftime("%Y%m%d_%H%M%S")
        todo = facts[number * per_session : (number + 1) * per_session]
        out = _SessionWriter(session, began, rng)
        slots = sorted(rng.sample(range(turns_per_session - 2), min(len(todo), turns_per_session - 2)))
        pending = dict(zip(slots, todo, strict=False))
        while out.turn < turns_per_session:
            if out.turn in pending:
                kind, subject, (name, said, asked) = pending.pop(out.turn)
                value = VALUES[name](rng)
                named, alone = _fact_sentences(said, subject, kind, value)
                if rng.random() < 0.4:  # the subject in one turn, the fact in the next
                    out.say(rng.choice(SPREAD_OPENERS).format(s=subject),
                            f"Loaded what we have on {subject}. The data looks complete; the chart is in the report.",
                            code=True)  # fmt: skip
                    evidence = out.say(rng.choice(SPREAD_LEADS) + alone, "Noted, I will keep that in mind.")
                    shape = "spread"
                else:
                    evidence = out.say(named, "Noted. I added it to the report.")
                    shape = "direct"
                phrasing = rng.choice(ASKING_WHEN if name in ("migrate", "launch") and rng.random() < 0.5 else ASKING)
                asking = asked.replace("the {s}", "{s}").format(s=subject)
                questions.append(Question(phrasing.format(q=asking), ((session, evidence),), shape, subject))
            elif rng.random() < 0.25:
                _kind, subject = rng.choice(subjects)
                out.say(rng.choice(SUBJECT_CHATTER).format(s=subject), "Sure, done. The data for it is in the report.")
            else:
                out.filler()
        (folder / f"{session}.jsonl").write_text("\n".join(out.lines) + "\n", encoding="utf-8")
    return questions
