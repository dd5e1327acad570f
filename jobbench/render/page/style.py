"""The report's stylesheet: CSS variables for light and dark (prefers-color-scheme).

The SVG marks carry classes only; every colour comes from these variables, text from
`currentColor`, so one page reads well in both schemes and prints in light.
"""

from __future__ import annotations

CSS = """
:root{--bg:#ffffff;--fg:#1f2328;--muted:#656d76;--grid:#d8dee4;--panel:#f6f8fa;
--a:#1f6feb;--b:#d4620b;--ideal:#1a7f37;--take:#8250df;--empty:#9aa4ae;--warn:#cf222e;
color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;
--grid:#30363d;--panel:#161b22;--a:#58a6ff;--b:#f0883e;--ideal:#3fb950;--take:#bc8cff;
--empty:#6e7681;--warn:#ff7b72}}
html{background:var(--bg);color:var(--fg)}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1760px;margin:0 auto;padding:16px 24px 40px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 6px;
border-top:1px solid var(--grid);padding-top:14px}h3{font-size:15px;margin:18px 0 4px}
h4{margin:0 0 4px;font-size:14px}
header ul{margin:4px 0;padding-left:18px;color:var(--muted)}
.params,.note,footer{color:var(--muted)}.note{margin:2px 0;font-size:12.5px}
.missing,.warn{color:var(--warn)}footer{margin-top:32px;font-size:12px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid var(--grid);white-space:nowrap}
th{text-align:right;font-weight:600;background:var(--panel)}
td{text-align:right}td:first-child,th:first-child{text-align:left}
tr.v-regression td{color:var(--warn);font-weight:600}tr.v-better td{color:var(--ideal)}
caption{text-align:left;color:var(--muted);font-size:12.5px;padding:2px 0}
table.grouped th,table.reps th{text-align:center}
table.reps td.txt{text-align:left;white-space:normal;min-width:9em}
table.reps td.warn{color:var(--warn)}
.banner{border:2px solid var(--warn);border-radius:6px;padding:4px 14px;margin:12px 0;
background:var(--panel)}.banner p{margin:6px 0}.banner strong{color:var(--warn)}
ul.verdicts{padding-left:0;list-style:none}ul.verdicts li{margin:3px 0}
ul.verdicts b{display:inline-block;min-width:7.5em}
li.v-regression b{color:var(--warn)}li.v-better b{color:var(--ideal)}
details{margin:6px 0;border-left:3px solid var(--grid);padding-left:10px}
summary{cursor:pointer;color:var(--muted)}details[open] summary{color:var(--fg)}
code{font-size:12.5px}h4.fig{margin:16px 0 4px}
.tables{display:flex;flex-wrap:wrap;align-items:flex-start;gap:8px 40px}
.factrow{display:flex;flex-direction:column;gap:12px}
.facts dl{display:grid;grid-template-columns:auto 1fr;gap:1px 12px;margin:4px 0}
.facts dt{color:var(--muted)}.facts dd{margin:0}
figure{margin:4px 0 10px}
.pair{display:grid;grid-template-columns:1fr;gap:8px 24px}
@media (min-width:1700px){.pair{grid-template-columns:1fr 1fr}}
svg.plot{display:block;width:100%;max-width:1100px;height:auto;color:var(--fg);
font-size:11.5px;font-family:inherit}
.lab{fill:currentColor}.small{font-size:10.5px}
.grid{stroke:var(--grid);stroke-width:1;fill:none}
.ax{stroke:currentColor;stroke-width:1;fill:none}
.ln{fill:none;stroke-width:2;stroke-linejoin:round}
.ln.a{stroke:var(--a)}.ln.b{stroke:var(--b)}
.ln.ideal{stroke:var(--ideal);stroke-dasharray:6 4;stroke-width:1.5}
.mark{fill:none;stroke-width:1;stroke-dasharray:3 3}.mark.a{stroke:var(--a)}
.mark.b{stroke:var(--b)}
.dot.a,.busy.a{fill:var(--a)}.dot.b,.busy.b{fill:var(--b)}
.lane{fill:var(--panel)}
.busy.held-bar{opacity:.35}
.fleet-cold{fill:var(--empty)}.fleet-boot{fill:var(--take);opacity:.6}
.fleet-stop{fill:var(--fg);opacity:.45}
.inflight{fill:var(--take);opacity:.45}.inflight.empty{fill:var(--empty)}
.arrive{stroke:var(--take);stroke-width:1.5;fill:none}
.answer{fill:var(--take)}
.pt{fill:currentColor}.pt.a{fill:var(--a)}.pt.b{fill:var(--b)}
.pt.ring{fill:none;stroke:currentColor;stroke-width:1.5}.pt.ring.a{stroke:var(--a)}
.pt.ring.b{stroke:var(--b)}.anom{fill:none;stroke:var(--warn);stroke-width:2}
.med{fill:none;stroke:currentColor;stroke-width:2}.med.a{stroke:var(--a)}.med.b{stroke:var(--b)}
"""
