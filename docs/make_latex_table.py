"""Rebuild docs/compare-latex-table.png: the paper table of docs/compare.md, compiled by pdflatex.

    python docs/make_latex_table.py        # needs pdflatex (texlive), pdftoppm (poppler-utils), Pillow

The table is `trecqr compare --format latex` on the five TREC CAsT 2021 document runs of
../shared/data (two baselines, the paper's names and labels), put in a one-page article with
booktabs, compiled, rendered at 200 dpi and cropped to its ink.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ("\\documentclass{article}\n\\usepackage{booktabs}\n\\pagestyle{empty}\n"
            "\\begin{document}\n\\input{table.tex}\n\\end{document}\n")


def paper_table_args(data: Path) -> list:
    """The command of docs/compare.md's LaTeX example (the test compiles the same)."""
    d = data / "cast2021"
    return ["compare", str(d / "qrels-docs.2021.qrel"), str(d / "docrun_org_manual_bm25.run"),
            str(d / "docrun_org_convdr.run"), str(d / "docrun_org_manual_ance.run"),
            str(d / "docrun_org_manual_ance_bert.run"), "-m", "ndcg_cut.3", "-m", "map",
            "-m", "recip_rank", "-n", "BM25", "-n", "ConvDR", "-n", "ANCE", "-n", "ANCE+BERT",
            "--label", "map=AP", "--baseline", "BM25", "--baseline", "ConvDR", "--format", "latex",
            "--caption", "TREC CAsT 2021, document runs.", "--latex-label", "tab:cast21",
            "--permutations", "2000"]


def compile_table(table: str, folder: Path) -> Path:
    """pdflatex on the table in a one-page article; the PDF's path (CalledProcessError if not)."""
    (folder / "table.tex").write_text(table)
    (folder / "doc.tex").write_text(DOCUMENT)
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                   cwd=folder, check=True, capture_output=True)
    return folder / "doc.pdf"


def main() -> None:
    from PIL import Image, ImageChops

    data = Path(os.environ.get("TRECQR_DATA", ROOT.parent / "shared" / "data"))
    table = subprocess.run([sys.executable, "-m", "trecqr"] + paper_table_args(data), check=True,
                           capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        pdf = compile_table(table, Path(tmp))
        subprocess.run(["pdftoppm", "-png", "-r", "200", "-singlefile", str(pdf),
                        str(Path(tmp) / "page")], check=True)
        page = Image.open(Path(tmp) / "page.png").convert("RGB")
        box = ImageChops.difference(page, Image.new("RGB", page.size, "white")).getbbox()
        left, top, right, bottom = box
        page.crop((left - 30, top - 30, right + 30, bottom + 30)).save(
            ROOT / "docs" / "compare-latex-table.png")


if __name__ == "__main__":
    main()
