"""Storage of reports."""

from reports.db import db


def load_report(report_id):
    """Return the report with this id, whoever owns it."""
    return db.fetch_one("SELECT * FROM reports WHERE id = ?", (report_id,))


def save_report(owner_id, report):
    """Store a report for its owner."""
    db.execute("INSERT INTO reports (owner_id, body) VALUES (?, ?)", (owner_id, report))
