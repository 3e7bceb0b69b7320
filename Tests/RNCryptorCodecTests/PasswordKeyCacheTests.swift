import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// `PasswordKeyCache` derives keys once per salt pair, writes standard password messages under
/// one salt pair with a fresh IV each, and stays correct under concurrent use. Prevents a cache
/// that hands out keys for the wrong salts, reuses an IV, writes messages other implementations
/// cannot open, or races on first use.
@Suite("PasswordKeyCache")
struct PasswordKeyCacheTests {
  private static let saltRange = 2..<18
  private static let ivRange = 18..<34

  @Test("decrypts messages written under several salt pairs")
  func severalSaltPairs() throws {
    let writers = try (0..<3).map { _ in try RNCryptor.PasswordKeys(password: Fixture.password) }
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    var messages: [(Data, Data)] = []
    for (index, writer) in writers.enumerated() {
      for copy in 0..<3 {
        let plaintext = Data("pair \(index) copy \(copy)".utf8)
        messages.append((plaintext, try RNCryptor.encrypt(plaintext, passwordKeys: writer)))
      }
    }
    #expect(Set(messages.map { $0.1[Self.saltRange] }).count == 3)
    // Twice over, in an interleaved order: the second pass runs on cached keys.
    for _ in 0..<2 {
      for (plaintext, message) in messages.reversed() {
        #expect(try cache.decrypt(message) == plaintext)
      }
    }
  }

  @Test("keys for a salt pair are derived once, then reused")
  func derivesOnce() throws {
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    let first = try cache.keys(encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    let second = try cache.keys(encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    #expect(first.keys.encryptionKey === second.keys.encryptionKey)
    #expect(first.keys.hmacKey === second.keys.hmacKey)
    // And they are the right keys.
    let expected = try Fixture.passwordKeys()
    #expect(first.keys.encryptionKey.constantTimeEquals(expected.keys.encryptionKey))
    #expect(first.keys.hmacKey.constantTimeEquals(expected.keys.hmacKey))
  }

  @Test("beyond capacity the oldest salt pair is evicted and re-derived correctly")
  func eviction() throws {
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password, capacity: 1)
    let otherSalt = Data(repeating: 0x99, count: 8)
    let first = try cache.keys(encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    _ = try cache.keys(encryptionSalt: otherSalt, hmacSalt: otherSalt)
    let again = try cache.keys(encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    #expect(first.keys.encryptionKey !== again.keys.encryptionKey)
    #expect(first.keys.encryptionKey.constantTimeEquals(again.keys.encryptionKey))
  }

  @Test("insert seeds the cache: no derivation for a pair it was given")
  func insert() throws {
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    let seeded = try Fixture.passwordKeys()
    cache.insert(seeded)
    let found = try cache.keys(encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    #expect(found.keys.encryptionKey === seeded.keys.encryptionKey)
  }

  @Test("encrypt reuses one salt pair with a fresh IV, and plain decrypt(_:password:) opens the messages")
  func encryptReusesSalts() throws {
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    let plaintext = Data("same plaintext".utf8)
    let first = try cache.encrypt(plaintext)
    let second = try cache.encrypt(plaintext)
    #expect(first[Self.saltRange] == second[Self.saltRange])
    #expect(first[Self.ivRange] != second[Self.ivRange])
    #expect(first.dropFirst(34) != second.dropFirst(34))
    let writing = try cache.writingKeys()
    #expect(first[Self.saltRange] == writing.encryptionSalt + writing.hmacSalt)
    for message in [first, second] {
      #expect(try RNCryptor.decrypt(message, password: Fixture.password) == plaintext)
      #expect(try cache.decrypt(message) == plaintext)
    }
    // A second cache for the same password picks its own salts but reads the first's messages.
    let other = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    #expect(try other.encrypt(plaintext)[Self.saltRange] != first[Self.saltRange])
    #expect(try other.decrypt(first) == plaintext)
  }

  @Test("a cache for another password fails authentication, and refuses key messages")
  func wrongInputs() throws {
    let message = try RNCryptor.encrypt(Data("x".utf8), passwordKeys: Fixture.passwordKeys())
    let wrong = try RNCryptor.PasswordKeyCache(password: "not the fixture password")
    #expect(throws: RNCryptor.Error.authenticationFailed) { try wrong.decrypt(message) }
    let keyMessage = try RNCryptor.encrypt(Data("x".utf8), keys: Fixture.keys())
    #expect(throws: RNCryptor.Error.wrongCredentialType(message: .keys)) { try wrong.decrypt(keyMessage) }
  }

  @Test("many tasks encrypting and decrypting through one cache get correct results")
  func concurrentUse() async throws {
    var random = SeededRandom.make(test: "PasswordKeyCacheTests.concurrentUse")
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password, capacity: 2)
    // Messages under three foreign salt pairs, more than the capacity, so tasks also race on
    // derivation and eviction.
    let foreign =
      try [Fixture.passwordKeys()] + (0..<2).map { _ in try RNCryptor.PasswordKeys(password: Fixture.password) }
    var inputs: [(plaintext: Data, message: Data)] = []
    for index in 0..<testIterations(24) {
      let plaintext = random.bytes(Int.random(in: 0...2_000, using: &random))
      inputs.append((plaintext, try RNCryptor.encrypt(plaintext, passwordKeys: foreign[index % foreign.count])))
    }
    let snapshot = inputs
    let results = try await withThrowingTaskGroup(of: (Bool, Data).self) { group in
      for (plaintext, message) in snapshot {
        group.addTask {
          let readBack = try cache.decrypt(message) == plaintext
          let written = try cache.encrypt(plaintext)
          let roundTrip = try cache.decrypt(written) == plaintext
          return (readBack && roundTrip, written)
        }
      }
      var results: [(Bool, Data)] = []
      for try await result in group { results.append(result) }
      return results
    }
    #expect(results.count == snapshot.count)
    #expect(results.allSatisfy { $0.0 }, "a task read back the wrong plaintext")
    // However the first calls raced, every task wrote under the one writing salt pair.
    #expect(Set(results.map { $0.1[Self.saltRange] }).count == 1)
    #expect(Set(results.map { $0.1[Self.ivRange] }).count == results.count)
  }
}
