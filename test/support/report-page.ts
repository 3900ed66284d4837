import type { ReportData } from "../../src/cli/report/report-data.js";

/** The ReportData a run report page embeds (its <script type="application/json" id="rw-data">). */
export function embeddedReportData(html: string): ReportData {
  const m = /<script type="application\/json" id="rw-data">([\s\S]*?)<\/script>/.exec(html);
  if (m === null) throw new Error("the page embeds no data");
  return JSON.parse(m[1]!.replace(/<\\\//g, "</")) as ReportData;
}
