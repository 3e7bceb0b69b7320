import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

@Suite("Error and report texts never contain a key, a value or a password")
struct ErrorTextTests {
  private static let password = "Hunter2-Secret-Password"
  private static let key = "SECRET-KEY-LAMBDA"
  private static let value = "SECRET-VALUE-LAMBDA"

  @Test("the errors of a store in use, and its recovery and verify reports, name files and offsets only")
  func noSecretsInErrorText() throws {
    try withTemporaryDirectory("error-text") { directory throws in
      let path = directory.file("store.cask")
      var options = DamageFixture.options
      options.segmentSizeLimit = 1 << 20
      var texts: [String] = []
      func record(_ body: () throws -> Void) {
        do {
          try body()
          Issue.record("expected an error")
        } catch {
          texts += [String(describing: error), String(reflecting: error), error.localizedDescription]
        }
      }

      let store = try CaskStore(path: path, password: Self.password, options: options)
      try store.put(Data(Self.value.utf8), forKey: Self.key)
      let longKey = Self.key + String(repeating: "-", count: CaskFormat.maximumKeyLength)
      record { try store.put(Data(Self.value.utf8), forKey: longKey) }
      record { try store.batch { try $0.put(Data(Self.value.utf8), forKey: longKey) } }
      record { try store.changePassword(to: "") }
      record { _ = try CaskStore(path: path, password: Self.password, options: options) }  // locked
      try store.close()
      record { _ = try store.get(Self.key) }
      record { try store.put(Data(Self.value.utf8), forKey: Self.key) }
      record { _ = try CaskStore(path: path, password: Self.password + "-wrong", options: options) }
      record { _ = try CaskStore(path: path, keys: try RNCryptor.Keys.random(), options: options) }
      record { _ = try CaskStore(path: path, password: "", options: options) }
      let reader = try CaskStore(path: path, password: Self.password, options: CaskStore.Options(readOnly: true))
      record { try reader.put(Data(Self.value.utf8), forKey: Self.key) }
      try reader.close()

      // A damaged value: get throws corrupt, and open and verify describe the damage.
      let segment = "\(path)/\(try #require(try DamageFixture.segmentNames(in: path).first))"
      try FileDamage.flipByte(at: try FileDamage.size(of: segment) - 40, in: segment)
      let damaged = try CaskStore(path: path, password: Self.password, options: options)
      record { _ = try damaged.get(Self.key) }
      texts.append(String(describing: try damaged.verify()))
      try damaged.close()
      try FileManager.default.removeItem(atPath: segment.replacingOccurrences(of: ".seg", with: ".hint"))
      let scanned = try CaskStore(path: path, password: Self.password, options: options)
      texts.append(String(describing: scanned.stats()))
      #expect(!scanned.stats().recovery.isClean)
      try scanned.close()

      #expect(texts.count >= 30)
      #expect(texts.contains { $0.contains("corrupt") })
      for text in texts {
        for secret in [Self.password, Self.key, Self.value] {
          #expect(!text.contains(secret), "error text holds a secret: \(text.prefix(200))")
        }
      }
    }
  }
}
