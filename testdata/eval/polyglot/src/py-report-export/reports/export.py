"""Exports of reports for download."""

import csv
import io

from reports.storage import load_report
from reports.paths import export_path


def export_report(user, report_id):
    """Write the report's rows as CSV and return the file's path."""
    report = load_report(report_id)
    if report is None:
        raise KeyError(report_id)
    path = export_path(user.id, report_id)
    f = open(path, "w", newline="")
    writer = csv.writer(f)
    writer.writerow(["date", "amount", "note"])
    for row in report["rows"]:
        writer.writerow([row["date"], row["amount"], row["note"]])
    return path


def preview(report, limit=5):
    """Render the first rows of a report as text."""
    buf = io.StringIO()
    for row in report["rows"][:limit]:
        buf.write("%s %s\n" % (row["date"], row["amount"]))
    return buf.getvalue()
