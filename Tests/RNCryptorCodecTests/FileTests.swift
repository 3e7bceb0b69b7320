import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// `encryptFile` and `decryptFile` stream through small chunks and put a file in place only
/// once it is whole and, for decryption, authenticated. Prevents unauthenticated plaintext
/// appearing under the destination name, temporary files left behind, and an existing file
/// destroyed by a failed decryption.
@Suite("File helpers")
struct FileTests {
  /// An odd, small chunk size, so chunk edges fall everywhere in header, blocks and HMAC.
  private static let chunkSize = 4_099

  private func write(_ data: Data, to path: String) throws {
    try data.write(to: URL(fileURLWithPath: path))
  }

  private func read(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
  }

  /// The names in `directory`, hidden ones (the temporary `.name.pid.partial`) included.
  private func listing(_ directory: TemporaryDirectory) throws -> Set<String> {
    Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
  }

  @Test("a ~3 MiB file round-trips with a small chunk size, key and password messages")
  func roundTrip() throws {
    var random = SeededRandom.make(test: "FileTests.roundTrip")
    try withTemporaryDirectory("cask-files") { directory throws in
      let plaintext = random.bytes(3 * (1 << 20) + Int.random(in: 0..<4_096, using: &random))
      try write(plaintext, to: directory.file("plain"))
      let keys = try Fixture.keys()

      try RNCryptor.encryptFile(
        at: directory.file("plain"), to: directory.file("keys.enc"), keys: keys, chunkSize: Self.chunkSize)
      let keyMessage = try read(directory.file("keys.enc"))
      #expect(keyMessage.count == RNCryptor.Format.messageLength(plaintextLength: plaintext.count, type: .keys))
      #expect(try RNCryptor.decrypt(keyMessage, keys: keys) == plaintext)
      try RNCryptor.decryptFile(
        at: directory.file("keys.enc"), to: directory.file("keys.out"), keys: keys, chunkSize: Self.chunkSize)
      #expect(try read(directory.file("keys.out")) == plaintext)

      try RNCryptor.encryptFile(
        at: directory.file("plain"), to: directory.file("password.enc"), password: Fixture.password,
        chunkSize: Self.chunkSize)
      let passwordMessage = try read(directory.file("password.enc"))
      #expect(
        passwordMessage.count == RNCryptor.Format.messageLength(plaintextLength: plaintext.count, type: .password))
      try RNCryptor.decryptFile(
        at: directory.file("password.enc"), to: directory.file("password.out"), password: Fixture.password,
        chunkSize: Self.chunkSize)
      #expect(try read(directory.file("password.out")) == plaintext)

      #expect(try listing(directory) == ["plain", "keys.enc", "keys.out", "password.enc", "password.out"])
    }
  }

  @Test("an empty file round-trips")
  func emptyFile() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      let keys = try Fixture.keys()
      try write(Data(), to: directory.file("plain"))
      try RNCryptor.encryptFile(at: directory.file("plain"), to: directory.file("enc"), keys: keys, chunkSize: 7)
      #expect(try FileDamage.size(of: directory.file("enc")) == RNCryptor.Format.minimumLength(.keys))
      try RNCryptor.decryptFile(at: directory.file("enc"), to: directory.file("out"), keys: keys, chunkSize: 7)
      #expect(try read(directory.file("out")).isEmpty)
    }
  }

  /// The 200 KiB plaintext of `encryptedFile(in:keys:)`.
  private static func filePlaintext() -> Data {
    var random = SeededRandom(seed: 0xF11E)
    return random.bytes(200 * 1_024)
  }

  /// Encrypts `filePlaintext()` into `directory/enc` and returns the message length.
  private func encryptedFile(in directory: TemporaryDirectory, keys: RNCryptor.Keys) throws -> Int {
    try write(Self.filePlaintext(), to: directory.file("plain"))
    try RNCryptor.encryptFile(at: directory.file("plain"), to: directory.file("enc"), keys: keys, chunkSize: 1_000)
    try FileManager.default.removeItem(atPath: directory.file("plain"))
    return try FileDamage.size(of: directory.file("enc"))
  }

  @Test("a damaged file fails to decrypt and leaves no destination and no temporary file", arguments: Damage.allCases)
  func damagedLeavesNothing(damage: Damage) throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      let keys = try Fixture.keys()
      let size = try encryptedFile(in: directory, keys: keys)
      try damage.apply(to: directory.file("enc"), size: size)
      #expect(throws: damage.expectedError(size: size)) {
        try RNCryptor.decryptFile(at: directory.file("enc"), to: directory.file("out"), keys: keys, chunkSize: 1_000)
      }
      #expect(try listing(directory) == ["enc"])
    }
  }

  @Test("a wrong password leaves no destination and no temporary file")
  func wrongPassword() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      try write(Data(repeating: 0x55, count: 50_000), to: directory.file("plain"))
      try RNCryptor.encryptFile(
        at: directory.file("plain"), to: directory.file("enc"), password: Fixture.password, chunkSize: 1_000)
      #expect(throws: RNCryptor.Error.authenticationFailed) {
        try RNCryptor.decryptFile(
          at: directory.file("enc"), to: directory.file("out"), password: "wrong", chunkSize: 1_000)
      }
      #expect(try listing(directory) == ["plain", "enc"])
    }
  }

  @Test("an existing destination is left untouched when decryption fails, and replaced when it succeeds")
  func existingDestination() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      let keys = try Fixture.keys()
      let size = try encryptedFile(in: directory, keys: keys)
      let previous = Data("the file that was here before".utf8)
      try write(previous, to: directory.file("out"))
      try FileManager.default.copyItem(atPath: directory.file("enc"), toPath: directory.file("good"))
      try FileManager.default.copyItem(atPath: directory.file("enc"), toPath: directory.file("short"))
      try FileDamage.flipByte(at: size / 2, in: directory.file("enc"))
      try FileDamage.truncate(directory.file("short"), to: size - 16)

      for damaged in ["enc", "short"] {
        #expect(throws: RNCryptor.Error.authenticationFailed, "\(damaged)") {
          try RNCryptor.decryptFile(
            at: directory.file(damaged), to: directory.file("out"), keys: keys, chunkSize: 1_000)
        }
        #expect(try read(directory.file("out")) == previous, "\(damaged)")
        #expect(try listing(directory) == ["enc", "short", "good", "out"], "\(damaged)")
      }

      try RNCryptor.decryptFile(at: directory.file("good"), to: directory.file("out"), keys: keys, chunkSize: 1_000)
      #expect(try read(directory.file("out")) == Self.filePlaintext())
      #expect(try listing(directory) == ["enc", "short", "good", "out"])
    }
  }

  @Test("replacing: false refuses an existing destination with EEXIST, leaves it and no temporary file")
  func noReplace() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      let keys = try Fixture.keys()
      _ = try encryptedFile(in: directory, keys: keys)
      let previous = Data("the file that was here before".utf8)
      try write(previous, to: directory.file("out"))
      let refused = RNCryptor.Error.file(operation: "create", path: directory.file("out"), errno: EEXIST)
      #expect(throws: refused) {
        try RNCryptor.decryptFile(at: directory.file("enc"), to: directory.file("out"), keys: keys, replacing: false)
      }
      #expect(throws: refused) {
        try RNCryptor.encryptFile(at: directory.file("enc"), to: directory.file("out"), keys: keys, replacing: false)
      }
      #expect(try read(directory.file("out")) == previous)
      #expect(try listing(directory) == ["enc", "out"])
      // A free name: the output appears under it, and only it.
      try RNCryptor.decryptFile(at: directory.file("enc"), to: directory.file("new"), keys: keys, replacing: false)
      #expect(try read(directory.file("new")) == Self.filePlaintext())
      #expect(try listing(directory) == ["enc", "out", "new"])
    }
  }

  @Test("a missing source gives a .file error naming it, and creates nothing")
  func missingSource() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      let source = directory.file("absent")
      #expect(throws: RNCryptor.Error.file(operation: "open", path: source, errno: ENOENT)) {
        try RNCryptor.decryptFile(at: source, to: directory.file("out"), keys: Fixture.keys())
      }
      #expect(try listing(directory).isEmpty)
    }
  }

  @Test("a destination in a missing directory gives a .file error naming the destination, not the temporary file")
  func missingDestinationDirectory() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      try write(Data("plain".utf8), to: directory.file("plain"))
      let destination = directory.file("absent/out")
      #expect(throws: RNCryptor.Error.file(operation: "write", path: destination, errno: ENOENT)) {
        try RNCryptor.encryptFile(at: directory.file("plain"), to: destination, keys: Fixture.keys())
      }
      #expect(try listing(directory) == ["plain"])
    }
  }
}

/// Ways a stored message gets damaged, with the error decrypting it must give.
enum Damage: CaseIterable, Sendable, CustomTestStringConvertible {
  case flippedIV
  case flippedCiphertext
  case flippedHMAC
  case lastByteCut
  case lastBlockCut
  case cutInsideHeader
  case emptied

  var testDescription: String { "\(self)" }

  func apply(to path: String, size: Int) throws {
    switch self {
    case .flippedIV: try FileDamage.flipByte(at: 5, in: path)
    case .flippedCiphertext: try FileDamage.flipByte(at: size / 2, in: path, mask: 0x10)
    case .flippedHMAC: try FileDamage.flipByte(at: size - 1, in: path, mask: 0x80)
    case .lastByteCut: try FileDamage.truncate(path, to: size - 1)
    case .lastBlockCut: try FileDamage.truncate(path, to: size - 16)
    case .cutInsideHeader: try FileDamage.truncate(path, to: 10)
    case .emptied: try FileDamage.truncate(path, to: 0)
    }
  }

  /// The error for a damaged key message that was `size` bytes long.
  func expectedError(size: Int) -> RNCryptor.Error {
    let minimum = RNCryptor.Format.minimumLength(.keys)
    switch self {
    case .flippedIV, .flippedCiphertext, .flippedHMAC, .lastBlockCut: return .authenticationFailed
    case .lastByteCut: return .messageTooShort(length: size - 1, minimum: minimum)
    case .cutInsideHeader: return .messageTooShort(length: 10, minimum: minimum)
    case .emptied: return .messageTooShort(length: 0, minimum: minimum)
    }
  }
}
