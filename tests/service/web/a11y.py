"""The accessibility audit of a page in a real browser: axe-core, as frontend/build.sh pins it.

tests/a11y/axe.min.js is the package's own file, committed beside its checksum and never served
by the app. It goes into the page through Playwright's evaluate (the DevTools protocol), which the
tool's Content-Security-Policy (script-src 'self') does not govern, so the page is audited with the
very headers it is served with. The rules are WCAG 2.0 and 2.1, levels A and AA, and axe's best
practices; a serious or critical violation fails, and every violation is counted by impact.
"""

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

AXE = Path(__file__).resolve().parents[2] / "a11y" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
IMPACTS = ("critical", "serious", "moderate", "minor")
FAILING = {"critical", "serious"}

_RUN = """async (tags) => {
  const options = {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]};
  const found = await axe.run(document, options);
  return {
    version: axe.version,
    url: location.href,
    lang: document.documentElement.lang,
    incomplete: found.incomplete.map((v) => ({
      id: v.id, targets: v.nodes.map((n) => n.target.join(" ")),
      summaries: v.nodes.map((n) => n.failureSummary),
    })),
    violations: found.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.map((n) => n.target.join(" ")),
      summaries: v.nodes.map((n) => n.failureSummary),
    })),
  };
}"""


@dataclass
class Audit:
    """One page's audit: its name, the axe version, and its violations (one per rule).

    `incomplete` names the rules axe could not decide on alone (a person should look).
    """

    name: str
    version: str
    url: str
    lang: str
    incomplete: list[dict]
    violations: list[dict]

    def counts(self) -> Counter:
        """Return the violations (a rule failing on this page), by impact."""
        return Counter(v["impact"] for v in self.violations)

    def elements(self) -> Counter:
        """Return the elements in violation, by impact."""
        return sum((Counter({v["impact"]: len(v["targets"])}) for v in self.violations), Counter())

    def failures(self) -> list[str]:
        """Return a line per serious or critical violation: rule, impact, elements, help."""
        return [
            f"{self.name}: {v['id']} ({v['impact']}) on {', '.join(v['targets'][:5])}"
            f"{' …' if len(v['targets']) > 5 else ''}: {v['help']}\n    {v['summaries'][0]}"
            for v in self.violations
            if v["impact"] in FAILING
        ]


def audit(target, name: str) -> Audit:
    """Run axe on a Playwright page or frame as it stands now."""
    if not target.evaluate("() => typeof window.axe === 'object'"):
        target.evaluate(AXE.read_text(encoding="utf-8"))
    found = target.evaluate(_RUN, TAGS)
    return Audit(
        name, found["version"], found["url"], found["lang"], found["incomplete"],
        found["violations"],
    )  # fmt: skip


@dataclass
class Ledger:
    """The audits of a run: counted, written as JSON, and checked for serious violations."""

    audits: list[Audit] = field(default_factory=list)

    def audit(self, target, name: str) -> Audit:
        """Audit a page or frame and keep the result."""
        found = audit(target, name)
        self.audits.append(found)
        return found

    def check(self) -> None:
        """Fail, naming every serious or critical violation of every page audited."""
        failures = [line for found in self.audits for line in found.failures()]
        assert not failures, "accessibility violations:\n" + "\n".join(failures)

    def totals(self, elements: bool = False) -> Counter:
        """Return the violations (or the elements in violation) over all pages, by impact."""
        each = (found.elements() if elements else found.counts() for found in self.audits)
        return sum(each, Counter())

    def rules(self) -> Counter:
        """Return how many pages each rule fired on, with its impact in the key."""
        return Counter(f"{v['id']} ({v['impact']})" for f in self.audits for v in f.violations)

    def table(self) -> str:
        """Return a plain table: a row per page, a column per impact (violations), totals."""
        rows = [f"{'page':56} " + " ".join(f"{i:>8}" for i in IMPACTS)]
        for found in self.audits:
            counts = found.counts()
            rows.append(f"{found.name:56} " + " ".join(f"{counts[i]:>8}" for i in IMPACTS))
        totals = self.totals()
        rows.append(f"{'all ' + str(len(self.audits)) + ' pages':56} "
                    + " ".join(f"{totals[i]:>8}" for i in IMPACTS))  # fmt: skip
        nodes = self.totals(elements=True)
        rows.append(f"{'  elements in violation':56} "
                    + " ".join(f"{nodes[i]:>8}" for i in IMPACTS))  # fmt: skip
        versions = sorted({found.version for found in self.audits})
        rows.append(f"axe-core {', '.join(versions)}; rules fired (pages): {dict(self.rules())}")
        return "\n".join(rows)

    def write(self, path: Path) -> None:
        """Write every audit as JSON, for the figures a report needs."""
        path.write_text(json.dumps([found.__dict__ for found in self.audits], indent=1))


def assert_accessible(target, name: str) -> Audit:
    """Audit a page or frame and fail on any serious or critical violation."""
    found = audit(target, name)
    assert not found.failures(), "accessibility violations:\n" + "\n".join(found.failures())
    return found
