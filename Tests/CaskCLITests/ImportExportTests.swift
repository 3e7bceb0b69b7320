import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `import` (JSON arrays and JSON Lines, batches, malformed input) and `export` (RNCryptor v3
/// files that open with the store's password, and plaintext JSON).
@Suite("cask import and export")
struct ImportExportTests {
  let password = "import-export-pw"

  func write(_ text: String, to name: String, in cask: CaskRunner) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: cask.path(name)))
  }

  @Test("import upserts a JSON array and JSON Lines by the id key, counting inserted and replaced")
  func importUpserts() throws {
    let cask = try CaskRunner("import")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    try write(
      """
      [
        {"eventId": "e1", "title": "One", "nested": {"a": [1, "]}"]}},
        {"eventId": 2, "title": "Two"}
      ]
      """, to: "events.json", in: cask)
    let array = try cask.run(
      ["import", "s", "events.json", "--collection", "events", "--id-key", "eventId"], password: password)
    #expect(array.status == 0, "\(array.err)")
    #expect(array.out == "Imported 2 objects into collection 'events' of store 's': 2 inserted, 0 replaced.\n")
    #expect(array.stderr.isEmpty)

    let lines = "{\"eventId\": \"e1\", \"title\": \"One again\"}\n\n{\"eventId\": \"e3\"}\n"
    let fromStdin = try cask.run(
      ["import", "s", "-", "--collection", "events", "--id-key", "eventId"], password: password, stdin: Data(lines.utf8)
    )
    #expect(fromStdin.status == 0, "\(fromStdin.err)")
    #expect(fromStdin.out.hasSuffix(": 1 inserted, 1 replaced.\n"))

    #expect(try cask.run(["keys", "s", "--collection", "events"], password: password).out == "2\ne1\ne3\n")
    let stored = try cask.run(["get", "s", "e1", "--collection", "events"], password: password)
    #expect(stored.out == "{\"eventId\": \"e1\", \"title\": \"One again\"}")
    let two = try cask.run(["get", "s", "2", "--collection", "events"], password: password)
    #expect(two.out == "{\"eventId\": 2, \"title\": \"Two\"}")
  }

  @Test("the id key is found however its name is spelled in the JSON: escapes, the last of two, another normal form")
  func idKeySpellings() throws {
    let cask = try CaskRunner("import-id-spellings")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    // An escaped name; a name given twice (the last counts, as in JSONDecoder); a name inside a
    // nested object and a string value that look like the key, which do not count; the key
    // named with a decomposed é while the command line gives the precomposed one.
    let lines = [
      #"{"ev\u0065nt": "escaped"}"#,
      #"{"event": "first", "event": "last"}"#,
      #"{"nested": {"event": "inner"}, "text": "\"event\": 1", "event": "outer"}"#,
    ].joined(separator: "\n")
    try write(lines, to: "events.jsonl", in: cask)
    let imported = try cask.run(
      ["import", "s", "events.jsonl", "--collection", "events", "--id-key", "event"], password: password)
    #expect(imported.status == 0, "\(imported.err)")
    #expect(
      try cask.run(["keys", "s", "--collection", "events"], password: password).out == "escaped\nlast\nouter\n")

    try write("{\"caf\u{65}\u{301}\": \"decomposed\"}\n", to: "cafe.jsonl", in: cask)
    let cafe = try cask.run(
      ["import", "s", "cafe.jsonl", "--collection", "cafes", "--id-key", "caf\u{e9}"], password: password)
    #expect(cafe.status == 0, "\(cafe.err)")
    #expect(try cask.run(["keys", "s", "--collection", "cafes"], password: password).out == "decomposed\n")
  }

  @Test("a malformed line is reported by number and nothing of its batch is written")
  func malformedLine() throws {
    let cask = try CaskRunner("malformed")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    try write("{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"c\", oops}\n{\"id\": \"d\"}\n", to: "bad.jsonl", in: cask)
    let result = try cask.run(["import", "s", "bad.jsonl", "--collection", "c", "--id-key", "id"], password: password)
    #expect(result.status == 1)
    #expect(result.err == "Error: invalid import at line 3 of 'bad.jsonl': malformed JSON; nothing was written\n")
    #expect(result.stdout.isEmpty)
    #expect(try cask.run(["keys", "s"], password: password).stdout.isEmpty)

    // With batches of 2, the first batch (lines 1-2) is in; the one holding line 3 is not.
    let batched = try cask.run(
      ["import", "s", "bad.jsonl", "--collection", "c", "--id-key", "id", "--batch-size", "2"], password: password)
    #expect(batched.status == 1)
    #expect(batched.err.contains("at line 3 of 'bad.jsonl': malformed JSON; the 2 objects before line 3 were imported"))
    #expect(try cask.run(["keys", "s", "--collection", "c"], password: password).out == "a\nb\n")

    let cases: [(String, String)] = [
      ("{\"id\": 1}\n[1, 2]\n", "line 2 of standard input: not a JSON object"),
      ("{\"id\": 1}\n{\"name\": \"x\"}\n", "line 2 of standard input: the object has no 'id' field"),
      ("{\"id\": true}\n", "line 1 of standard input: the value of 'id' is not a string or a number"),
      ("[\n{\"id\": 1},\n{\"id\": 2}\n", "line 4 of standard input: the array is not closed"),
      ("[{\"id\": 1},\n 7]", "line 2 of standard input: expected a JSON object in the array"),
    ]
    for (input, message) in cases {
      let bad = try cask.run(
        ["import", "s", "-", "--collection", "other", "--id-key", "id"], password: password, stdin: Data(input.utf8))
      #expect(bad.status == 1)
      #expect(bad.err.contains("invalid import at \(message); nothing was written"), "\(bad.err)")
    }
    #expect(try cask.run(["keys", "s", "--collection", "other"], password: password).stdout.isEmpty)
  }

  @Test("export --format rncryptor writes files that RNCryptor.decrypt opens with the export password")
  func exportRNCryptor() throws {
    let cask = try CaskRunner("export")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    var random = SeededRandom.make(test: "cli export")
    var expected: [String: Data] = [:]
    for index in 0..<6 {
      let id = "secret-id-\(index)"
      let value = index == 0 ? random.bytes(5000) : Data("{\"n\": \(index)}".utf8)
      #expect(try cask.run(["put", "s", id, "--collection", "things"], password: password, stdin: value).status == 0)
      expected["things\u{0}\(id)"] = value
    }
    #expect(try cask.run(["put", "s", "loose"], password: password, stdin: Data("x".utf8)).status == 0)

    let exportPassword = "export-pw-of-its-own"
    let result = try cask.run(
      ["export", "s", "out", "--collection", "things"], password: password,
      environment: ["CASK_EXPORT_PASSWORD": exportPassword])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out.contains("Exported 6 values of collection 'things' of store 's' to 'out' as RNCryptor v3 files"))
    #expect(result.stderr.isEmpty)

    let names = try FileManager.default.contentsOfDirectory(atPath: cask.path("out"))
    #expect(names.count == 7)
    #expect(names.contains("listing.rncryptor"))
    #expect(!names.contains { $0.contains("secret-id") }, "file names reveal ids")
    let listingData = try RNCryptor.decrypt(
      Data(contentsOf: URL(fileURLWithPath: cask.path("out/listing.rncryptor"))), password: exportPassword)
    let listing = try #require(try JSONSerialization.jsonObject(with: listingData) as? [String: Any])
    let entries = try #require(listing["entries"] as? [[String: String]])
    #expect(entries.count == 6)
    var found: [String: Data] = [:]
    for entry in entries {
      let file = try #require(entry["file"])
      let message = try Data(contentsOf: URL(fileURLWithPath: cask.path("out/\(file)")))
      #expect(!message.range(of: Data("secret-id".utf8)).isSome)
      found[try #require(entry["key"])] = try RNCryptor.decrypt(message, password: exportPassword)
      #expect(entry["collection"] == "things")
    }
    #expect(found == expected)

    let notEmpty = try cask.run(["export", "s", "out"], password: password)
    #expect(notEmpty.status == 1 && notEmpty.err == "Error: 'out' already exists and is not an empty directory\n")
    let noSuchCollection = try cask.run(
      ["export", "s", "out2", "--collection", "nope"], password: password,
      environment: ["CASK_EXPORT_PASSWORD": exportPassword])
    #expect(noSuchCollection.status == 1 && noSuchCollection.err == "Error: store 's' has no collection 'nope'\n")
  }

  @Test("export --format json writes plaintext files with a listing and warns on stderr")
  func exportJSON() throws {
    let cask = try CaskRunner("export-json")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "a"], password: password, stdin: Data("{\"x\": 1}".utf8)).status == 0)
    #expect(try cask.run(["put", "s", "b"], password: password, stdin: Data([0xFF, 0x00])).status == 0)
    let result = try cask.run(["export", "s", "plain", "--format", "json"], password: password)
    #expect(result.status == 0)
    #expect(result.err.hasPrefix("warning: the files in 'plain' are NOT encrypted"))
    #expect(result.out.contains("1 value that is not JSON was written as .bin files"))
    let names = Set(try FileManager.default.contentsOfDirectory(atPath: cask.path("plain")))
    #expect(names == ["00000001.json", "00000002.bin", "listing.json"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("plain/00000001.json"))) == Data("{\"x\": 1}".utf8))
    let listing = try Data(contentsOf: URL(fileURLWithPath: cask.path("plain/listing.json")))
    #expect(String(decoding: listing, as: UTF8.self).contains("\"key\" : \"b\""))
  }

  @Test("an array error right after a committed batch names the line from which nothing was written")
  func importErrorAfterFullBatchNamesTheRightLine() throws {
    let cask = try CaskRunner("import-batch-line")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    // Batches of 2: lines 2-3 and 4-5 are committed; line 6 lacks its comma.
    let input = "[\n{\"id\": 1},\n{\"id\": 2},\n{\"id\": 3},\n{\"id\": 4}\n{\"id\": 5}\n]\n"
    try Data(input.utf8).write(to: URL(fileURLWithPath: cask.path("a.json")))
    let result = try cask.run(
      ["import", "s", "a.json", "--collection", "c", "--id-key", "id", "--batch-size", "2"], password: password)
    #expect(result.status == 1)
    #expect(try cask.run(["keys", "s", "--collection", "c"], password: password).out == "1\n2\n3\n4\n")
    // Objects 3 and 4 (lines 4 and 5) are in the store: the message must not say that nothing
    // from line 4 on was written.
    #expect(
      result.err
        == "Error: invalid import at line 6 of 'a.json': expected ',' or ']' after an object of the array; "
        + "the 4 objects before line 6 were imported, nothing from that line on\n", "\(result.err)")
  }
}

extension Optional {
  fileprivate var isSome: Bool { self != nil }
}

/// `cask import` into a collection whose indexes a program declared: refused before anything is
/// written, since the tool cannot make their entries.
@Suite("cask import and secondary indexes")
struct ImportIndexedCollectionTests {
  let password = "import-indexed-pw"

  @Test("import into an indexed collection is refused with one line naming it, exit 1, nothing written")
  func indexedCollectionRefused() throws {
    let cask = try CaskRunner("import-indexed")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: password)
    do {
      let store = try CaskStore(path: path, password: password)
      let items = store.collection(
        CrashItem.self, named: "items", indexes: [.index("owner", \.owner), .unique("email", \.email)])
      try items.save(CrashItem(id: "kept", owner: "ana", rank: 1, tags: [], email: "kept@x", origin: "test"))
      try store.close()
    }
    let secret = "owner-value-7d1e"
    try Data(#"{"id": "n1", "owner": "\#(secret)", "rank": 2, "tags": [], "email": "n1@x", "origin": "file"}"#.utf8)
      .write(to: URL(fileURLWithPath: cask.path("in.jsonl")))
    let refused = try cask.run(
      ["import", "s", "in.jsonl", "--collection", "items", "--id-key", "id"], password: password)
    #expect(refused.status == 1)
    #expect(
      refused.err
        == "Error: collection 'items' has secondary indexes, which cask import cannot keep; "
        + "import it with the application's importJSON(contentsOf:); nothing was written\n")
    #expect(!refused.err.contains(secret) && !refused.err.contains("n1"))
    #expect(refused.stdout.isEmpty)
    #expect(try cask.run(["keys", "s", "--collection", "items"], password: password).out == "kept\n")
    // Another collection of the same store, without indexes, imports as usual.
    let other = try cask.run(
      ["import", "s", "in.jsonl", "--collection", "plain", "--id-key", "id"], password: password)
    #expect(other.status == 0, "\(other.err)")
    #expect(try cask.run(["keys", "s", "--collection", "plain"], password: password).out == "n1\n")
  }
}
