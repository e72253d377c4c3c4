"""Where exports are written."""

import os

EXPORT_DIR = "/var/lib/reports/exports"


def export_path(user_id, report_id):
    return os.path.join(EXPORT_DIR, "%s-%s.csv" % (user_id, report_id))
