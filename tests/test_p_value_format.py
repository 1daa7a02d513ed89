"""One rule for showing a p-value: the CLI, the dashboard and paper tables print it alike
(issue 31: `0.0002` in the terminal was `2.3e-04` on the dashboard)."""

from __future__ import annotations

import numpy as np

VALUES = (0.04321, 2.3e-4, 1e-4, 9.9e-4, 3.14e-9, 5.17e-10, 0.0, 1.0, np.float64(2.3e-4), None,
          float("nan"))
SHOWN = ["0.0432", "0.0002", "0.0001", "0.0010", "3.1e-09", "5.2e-10", "0.0000", "1.0000",
         "0.0002", "–", "–"]


def test_one_p_value_reads_alike_in_every_front_end() -> None:
    from dashboard.columns import format_p as dashboard_p
    from tcdb.cli.output import format_p as cli_p
    from tcdb.operations.paper import format_value
    from tcdb.vocabulary import format_p

    assert [format_p(p) for p in VALUES] == SHOWN
    assert [cli_p(p) for p in VALUES] == SHOWN
    assert [dashboard_p(p) for p in VALUES] == SHOWN
    assert [format_value(None if p is None else float(p), p=True) for p in VALUES] == SHOWN


def test_the_dashboard_table_shows_the_clis_p() -> None:
    """What a dashboard table renders (its Styler) for a p column is the CLI's text."""
    import pandas as pd

    from dashboard.columns import p_value, styled

    frame = pd.DataFrame({"p": [2.3e-4, 3.14e-9, 0.5]})
    data, _, _ = styled(frame, {"p": p_value()})
    html = data.to_html()
    for shown in ("0.0002", "3.1e-09", "0.5000"):
        assert shown in html
    assert "2.3e-04" not in html
