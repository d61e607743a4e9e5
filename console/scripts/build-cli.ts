/** `npm run console:build`: builds console/dist, prints the JavaScript size report, exits 1 when over budget. */
import { buildConsole, formatReport } from './build.ts';

const report = await buildConsole();
for (const line of formatReport(report)) console.log(line);
if (report.overBudget) process.exit(1);
