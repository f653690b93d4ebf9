// Lists as operators send them: CSV with quotes and variables, JSON rows; bad rows reported by line
// and field while the rest are taken; a list over the byte limit refused as it streams in.
import { describe, expect, it } from "vitest";
import { ListError, parseCsvList, parseJsonList } from "../../src/campaigns/list-parse.ts";

const limits = { maxBytes: 1024 * 1024, maxRows: 1000 };

describe("CSV lists", () => {
  it("takes the number, the zone and every other column as a variable, quotes and all", async () => {
    const csv =
      'Phone,name,TimeZone,note\r\n+1 (555) 0100,Ada,Europe/Paris,"says ""hi"", twice"\r\n+15550101,"Bob\nSmith",,\n';
    const { rows, problems } = await parseCsvList([csv], "sip", limits);
    expect(problems).toEqual([]);
    expect(rows).toEqual([
      {
        number: "+15550100",
        variables: { name: "Ada", note: 'says "hi", twice' },
        timeZone: "Europe/Paris",
        line: 2,
      },
      { number: "+15550101", variables: { name: "Bob\nSmith" }, line: 3 },
    ]);
  });

  it("reads a list split anywhere across chunks, a quote at a chunk's end included", async () => {
    const csv = 'number,name\n+15550100,"a ""b"""\n+15550101,c\n';
    for (let cut = 1; cut < csv.length; cut++) {
      const bytes = new TextEncoder().encode(csv);
      const { rows } = await parseCsvList([bytes.slice(0, cut), bytes.slice(cut)], "sip", limits);
      expect(rows.map((r) => r.variables.name)).toEqual(['a "b"', "c"]);
    }
  });

  it("reports missing numbers, bad numbers, bad zones and duplicates by line, takes the rest", async () => {
    const csv = [
      "number,timezone",
      "+15550100,America/New_York",
      ",UTC",
      "call me,UTC",
      "+15550102,Mars/Olympus",
      "+1 555 0100,UTC",
      "+15550103,",
    ].join("\n");
    const { rows, problems } = await parseCsvList([csv], "sip", limits, ["+15550103"]);
    expect(rows.map((r) => r.number)).toEqual(["+15550100"]);
    expect(problems).toEqual([
      { line: 3, field: "number", message: "missing" },
      { line: 4, field: "number", message: expect.stringContaining('"call me"') },
      { line: 5, field: "timezone", message: expect.stringContaining("Mars/Olympus") },
      { line: 6, field: "number", message: "+15550100 duplicates line 2" },
      { line: 7, field: "number", message: "+15550103 is already in the campaign" },
    ]);
  });

  it("refuses a list with no number column, or a column that is not a variable name", async () => {
    await expect(parseCsvList(["name,city\nAda,Paris\n"], "sip", limits)).rejects.toThrow(/no number column/);
    await expect(parseCsvList(["number,first name\n+15550100,Ada\n"], "sip", limits)).rejects.toThrow(
      /column 2.*not a variable name/,
    );
    await expect(parseCsvList([""], "sip", limits)).rejects.toThrow(/empty/);
  });

  it("refuses a list over the byte limit as soon as it passes it, without reading the rest", async () => {
    let chunksRead = 0;
    const chunk = `${"+15550100,x\n".repeat(1000)}`;
    async function* huge() {
      yield "number,v\n";
      for (let i = 0; i < 100_000; i++) {
        chunksRead++;
        yield chunk;
      }
    }
    const err = await parseCsvList(huge(), "sip", { maxBytes: 100_000, maxRows: 1_000_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(ListError);
    expect((err as ListError).status).toBe(413);
    expect(chunksRead).toBeLessThan(20);
  });

  it("refuses a list over the row limit whole", async () => {
    const csv = `number\n${Array.from({ length: 11 }, (_, i) => `+1555010${String(i).padStart(2, "0")}`).join("\n")}`;
    await expect(parseCsvList([csv], "sip", { maxBytes: 1e6, maxRows: 10 })).rejects.toThrow(
      /more than 10 rows/,
    );
  });
});

describe("JSON lists", () => {
  it("takes {number, timeZone, variables} and reports each bad row's field", () => {
    const { rows, problems } = parseJsonList(
      [
        { number: "+15550100", timeZone: "Asia/Tokyo", variables: { name: "Ada", n: 3 } },
        { number: 15550101 },
        { phone: "+15550102" },
        { number: "+15550103", variables: { "bad name": "x" } },
        "+15550104",
      ],
      "sip",
      limits,
    );
    expect(rows).toEqual([
      { number: "+15550100", timeZone: "Asia/Tokyo", variables: { name: "Ada", n: "3" }, line: 1 },
      { number: "15550101", variables: {}, line: 2 },
    ]);
    expect(problems.map((p) => [p.line, p.field])).toEqual([
      [3, "phone"],
      [4, "variables.bad name"],
      [5, "row"],
    ]);
  });
});
