import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `encrypt` and `decrypt`: RNCryptor v3 files, streamed, authenticated before OUT appears.
@Suite("cask encrypt and decrypt")
struct FileCryptTests {
  let password = "file-password"

  @Test("a 50 MiB file encrypts and decrypts back in bounded memory")
  func largeFileStreams() throws {
    let cask = try CaskRunner("bigfile")
    defer { cask.remove() }
    var random = SeededRandom.make(test: "cli 50 MiB file")
    let block = random.bytes(1 << 20)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cask.path("big")).creatingEmptyFile())
    for index in 0..<50 {
      var chunk = block
      chunk[0] = UInt8(index)
      try handle.write(contentsOf: chunk)
    }
    try handle.close()

    let (baseline, baselinePeak) = try cask.runMeasuringPeakMemory(["--version"], password: password)
    #expect(baseline.status == 0)
    let (encrypted, encryptPeak) = try cask.runMeasuringPeakMemory(
      ["encrypt", cask.path("big"), cask.path("big.rncryptor")], password: password)
    #expect(encrypted.status == 0, "\(encrypted.err)")
    #expect(encrypted.stdout.isEmpty && encrypted.stderr.isEmpty)
    let (decrypted, decryptPeak) = try cask.runMeasuringPeakMemory(
      ["decrypt", cask.path("big.rncryptor"), cask.path("big.out")], password: password)
    #expect(decrypted.status == 0, "\(decrypted.err)")

    // Holding the file would take 50 MiB at least; streaming in 1 MiB chunks takes a few.
    let allowance = 24 << 20
    #expect(encryptPeak < baselinePeak + allowance, "encrypt peak \(encryptPeak) vs baseline \(baselinePeak)")
    #expect(decryptPeak < baselinePeak + allowance, "decrypt peak \(decryptPeak) vs baseline \(baselinePeak)")
    #expect(try FileDamage.size(of: cask.path("big.rncryptor")) == 50 << 20 + 66 + 16)
    #expect(try filesEqual(cask.path("big"), cask.path("big.out")))
  }

  @Test("encrypt output opens with RNCryptor.decrypt, and RNCryptor.encrypt output with decrypt")
  func interoperates() throws {
    let cask = try CaskRunner("interop")
    defer { cask.remove() }
    var random = SeededRandom.make(test: "cli interop")
    let plain = random.bytes(100_003)
    try plain.write(to: URL(fileURLWithPath: cask.path("plain")))
    #expect(try cask.run(["encrypt", "plain", "sealed"], password: password).status == 0)
    let sealed = try Data(contentsOf: URL(fileURLWithPath: cask.path("sealed")))
    #expect(try RNCryptor.decrypt(sealed, password: password) == plain)

    try RNCryptor.encrypt(plain, password: password).write(to: URL(fileURLWithPath: cask.path("theirs")))
    #expect(try cask.run(["decrypt", "theirs", "mine"], password: password).status == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("mine"))) == plain)
  }

  @Test("decrypt with a wrong password or a modified file writes no OUT at all")
  func decryptAuthenticatesFirst() throws {
    let cask = try CaskRunner("auth")
    defer { cask.remove() }
    try Data(repeating: 1, count: 3 << 20).write(to: URL(fileURLWithPath: cask.path("plain")))
    #expect(try cask.run(["encrypt", "plain", "sealed"], password: password).status == 0)

    let wrong = try cask.run(["decrypt", "sealed", "out"], password: "wrong")
    #expect(wrong.status == 1)
    #expect(wrong.err == "Error: cannot decrypt 'sealed': wrong password, or the file was modified\n")
    try FileDamage.flipByte(at: 2 << 20, in: cask.path("sealed"))
    let modified = try cask.run(["decrypt", "sealed", "out"], password: password)
    #expect(modified.status == 1 && modified.err == wrong.err)
    #expect(try FileManager.default.contentsOfDirectory(atPath: cask.path("")).filter { $0.contains("out") }.isEmpty)

    let notRNCryptor = try cask.run(["decrypt", "plain", "out"], password: password)
    #expect(notRNCryptor.status == 1 && notRNCryptor.err == "Error: 'plain' is not an intact RNCryptor v3 file\n")
    let exists = try cask.run(["encrypt", "plain", "sealed"], password: password)
    #expect(exists.status == 1 && exists.err == "Error: 'sealed' already exists (pass --force to replace it)\n")
    #expect(try cask.run(["encrypt", "plain", "sealed", "--force"], password: password).status == 0)
    let missing = try cask.run(["encrypt", "nothing", "x"], password: password)
    #expect(missing.status == 1 && missing.err == "Error: 'nothing' does not exist\n")
  }

  private func filesEqual(_ a: String, _ b: String) throws -> Bool {
    let first = try FileHandle(forReadingFrom: URL(fileURLWithPath: a))
    let second = try FileHandle(forReadingFrom: URL(fileURLWithPath: b))
    defer {
      try? first.close()
      try? second.close()
    }
    while true {
      let left = try first.read(upToCount: 1 << 20) ?? Data()
      let right = try second.read(upToCount: 1 << 20) ?? Data()
      if left != right { return false }
      if left.isEmpty { return true }
    }
  }

  /// Prevents a trap: Foundation's `deletingLastPathComponent` traps on a one-character path,
  /// and the OUT of encrypt and decrypt went through it.
  @Test("one-character names for IN and OUT")
  func oneCharacterNames() throws {
    let cask = try CaskRunner("one-char")
    defer { cask.remove() }
    try Data("tiny".utf8).write(to: URL(fileURLWithPath: cask.path("i")))
    let encrypted = try cask.run(["encrypt", "i", "o"], password: "one-char-pw")
    #expect(encrypted.status == 0, "\(encrypted.err)")
    let decrypted = try cask.run(["decrypt", "o", "p"], password: "one-char-pw")
    #expect(decrypted.status == 0, "\(decrypted.err)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("p"))) == Data("tiny".utf8))
  }
}

extension URL {
  fileprivate func creatingEmptyFile() -> URL {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return self
  }

}
