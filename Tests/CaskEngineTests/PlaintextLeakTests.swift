import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("No key, value or password reaches the disk in plaintext")
struct PlaintextLeakTests {
  private static let firstPassword = "Correct-Horse-Battery-Staple-Ω"
  private static let secondPassword = "Zweites-Geheimes-Passwort-ß"

  /// Distinctive keys and values (each at least 8 UTF-8 bytes), ASCII and not.
  private static let entries: [(key: String, value: String)] = [
    ("SECRET-KEY-ALPHA-0001", "PLAINTEXT-VALUE-ALPHA-0001"),
    ("ключ-секретный-бета", "значение-тайное-бета"),
    ("秘密の鍵ガンマ", "秘密の値ガンマです"),
    ("emoji-🔑-delta-key", "emoji-🗝️-delta-value"),
    ("users\u{0}secret-id-epsilon", "{\"name\":\"Epsilon Secretary\"}"),
    ("caf\u{E9}-secret-zeta", "cr\u{E8}me-br\u{FB}l\u{E9}e-zeta"),
  ]
  private static let deleted = (key: "DELETED-KEY-ETA-0007", value: "DELETED-VALUE-ETA-0007")
  private static let overwritten = (key: "OVERWRITTEN-KEY-THETA", old: "OLD-VALUE-THETA-0008", new: "NEW-VALUE-THETA")
  private static let late = (key: "AFTER-REKEY-KEY-IOTA", value: "AFTER-REKEY-VALUE-IOTA")
  /// A long value of one repeated phrase: no block of it may show through either.
  private static let repeated = (
    key: "REPEATED-KEY-KAPPA", value: String(repeating: "KAPPA-REPEATED-PHRASE-", count: 300)
  )

  @Test("after puts, batches, deletes, compaction, close and changePassword, no file holds a secret")
  func noSecretInAnyFile() throws {
    try withTemporaryDirectory("secrecy") { directory throws in
      let path = directory.file("store.cask")
      let options = CaskStore.Options(durability: .always, segmentSizeLimit: 4096, autoCompaction: nil)
      var random = SeededRandom(seed: 7)

      var store = try CaskStore(path: path, password: Self.firstPassword, options: options)
      try store.put(Data(Self.entries[0].value.utf8), forKey: Self.entries[0].key)
      try store.put(Data(Self.overwritten.old.utf8), forKey: Self.overwritten.key)
      try store.batch { batch in
        for entry in Self.entries.dropFirst() { try batch.put(Data(entry.value.utf8), forKey: entry.key) }
        try batch.put(Data(Self.deleted.value.utf8), forKey: Self.deleted.key)
        try batch.put(Data(Self.repeated.value.utf8), forKey: Self.repeated.key)
      }
      // Filler, so that segments roll over and compaction has several inputs.
      for index in 0..<40 { try store.put(random.bytes(200), forKey: "filler-\(index)") }
      #expect(try store.delete(Self.deleted.key))
      try store.put(Data(Self.overwritten.new.utf8), forKey: Self.overwritten.key)
      try #require(try store.compact() != nil)
      try store.batch { batch in
        try batch.delete("filler-0")
        try batch.put(Data(Self.entries[0].value.utf8), forKey: Self.entries[0].key)
      }
      try store.close()

      store = try CaskStore(path: path, password: Self.firstPassword, options: options)
      try store.changePassword(to: Self.secondPassword)
      try store.put(Data(Self.late.value.utf8), forKey: Self.late.key)
      try store.close()
      // Every file, as a reader of the disk would find it after a clean close.
      let reader = try CaskStore(path: path, password: Self.secondPassword, options: CaskStore.Options(readOnly: true))
      #expect(try reader.get(Self.late.key) == Data(Self.late.value.utf8))
      #expect(try reader.get(Self.deleted.key) == nil)
      #expect(try reader.verify().isClean)
      try reader.close()

      var secrets = [Self.firstPassword, Self.secondPassword, Self.deleted.key, Self.deleted.value]
      secrets += [Self.overwritten.key, Self.overwritten.old, Self.overwritten.new, Self.late.key, Self.late.value]
      secrets += [Self.repeated.key, "KAPPA-REPEATED-PHRASE-"]
      for entry in Self.entries { secrets += [entry.key, entry.value] }
      secrets.append("secret-id-epsilon")
      let files = try FileManager.default.contentsOfDirectory(atPath: path)
      #expect(files.contains { $0.hasSuffix(".hint") }, "the check must cover hint files")
      #expect(files.filter { $0.hasSuffix(".seg") }.count >= 2)
      var header = Data()
      for name in files {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        if name == CaskFormat.headerFileName { header = bytes }
        for secret in secrets {
          #expect(!name.contains(secret), "a file name holds a secret")
          for encoding in [String.Encoding.utf8, .utf16LittleEndian] {
            let needle = try #require(secret.data(using: encoding))
            #expect(needle.count >= 8)
            #expect(bytes.range(of: needle) == nil, "\(name) holds a secret in plaintext (\(encoding))")
          }
        }
      }
      // The search itself works: the header's magic is found where it is.
      #expect(header.range(of: Data(CaskFormat.headerMagic)) == 0..<8)
    }
  }
}
