import CaskTestSupport
import Foundation
import Testing

/// `--json` on the commands that move data: one JSON document on standard output, with the
/// field names of the library's report types, and no text report.
@Suite("--json reports of import, export, compact, backup, passwd and salvage")
struct JSONReportTests {
  let password = "json-pw"

  func document(_ result: CaskResult) throws -> [String: Any] {
    #expect(result.status == 0, "\(result.err)")
    return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.out)")
  }

  @Test("each command prints its figures under the library's names")
  func reports() throws {
    let cask = try CaskRunner("json-reports")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let input = Data((1...3).map { #"{"id": \#($0)}"# }.joined(separator: "\n").utf8)
    try input.write(to: URL(fileURLWithPath: cask.path("in.jsonl")))
    let imported = try document(
      cask.run(["import", "s", "in.jsonl", "--collection", "c", "--id-key", "id", "--json"], password: password))
    #expect(imported["objects"] as? Int == 3 && imported["inserted"] as? Int == 3 && imported["replaced"] as? Int == 0)
    #expect(imported["store"] as? String == "s" && imported["collection"] as? String == "c")
    #expect(imported["source"] as? String == "in.jsonl")

    let again = try document(
      cask.run(["import", "s", "in.jsonl", "--collection", "c", "--id-key", "id", "--json"], password: password))
    #expect(again["replaced"] as? Int == 3)

    let compacted = try document(cask.run(["compact", "s", "--json"], password: password))
    #expect(compacted["compacted"] as? Bool == true)
    for field in ["inputSegments", "outputSegments", "recordsCopied", "bytesBefore", "bytesAfter"] {
      #expect(compacted[field] is Int, "compact lacks \(field)")
    }
    #expect((compacted["damagedRecords"] as? [Any])?.isEmpty == true)

    let backup = try document(cask.run(["backup", "s", "b", "--json"], password: password))
    #expect(backup["segments"] is Int && backup["hints"] is Int && backup["bytes"] is Int)
    #expect(backup["destination"] as? String == "b")

    let exported = try document(
      cask.run(["export", "s", "out", "--json", "--reuse-store-password"], password: password))
    #expect(exported["values"] as? Int == 3 && exported["format"] as? String == "rncryptor")
    #expect((exported["skipped"] as? [Any])?.isEmpty == true)

    let salvaged = try document(cask.run(["salvage", "s", "copy", "--json"], password: password))
    #expect(salvaged["values"] as? Int == 3)

    let changed = try document(
      cask.run(["passwd", "s", "--json"], password: password, environment: ["CASK_NEW_PASSWORD": "new-pw"]))
    #expect(changed["changed"] as? Bool == true)
  }
}
