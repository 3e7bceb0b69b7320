// `cask-crash-writer --no-spare-descriptor DIR`: with descriptors 0-2 closed and no free
// descriptor above 2, a file the codec or the engine creates lands on a standard descriptor
// and cannot be moved off it (`EMFILE`): the call must fail and remove the file it created.
// Started by ClosedStandardDescriptorTests; the exit status says what happened (0: both
// failed cleanly), since standard output and error are closed.

import CaskEngine
import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

enum NoSpareDescriptor {
  /// The exit statuses the test reads.
  enum Status: Int32 {
    case cleanFailures = 0
    case setUpFailed = 2
    case codecDidNotFail = 10
    case codecFailedOtherwise = 11
    case codecLeftItsFile = 12
    case engineDidNotFail = 20
    case engineFailedOtherwise = 21
    case engineLeftItsFile = 22
  }

  static func run(in directory: String) -> Status {
    let input = directory + "/plain"
    // OpenSSL reads its configuration on first use: done now, while descriptors are free.
    guard FileManager.default.createFile(atPath: input, contents: Data("plaintext".utf8)),
      (try? RNCryptor.encryptFile(at: input, to: directory + "/warm-up", password: "pw")) != nil
    else { return .setUpFailed }
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_max >= 64 else {
      return .setUpFailed
    }
    limit.rlim_cur = 64
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return .setUpFailed }
    // Every descriptor taken, then 0, 1, 2 and one above them freed.
    var fillers: [Int32] = []
    while case let descriptor = open("/dev/null", O_RDONLY), descriptor >= 0 { fillers.append(descriptor) }
    guard errno == EMFILE, let spare = fillers.last, spare > 2 else { return .setUpFailed }
    close(spare)
    for standard: Int32 in 0...2 { close(standard) }

    // The codec: the input takes 0 and moves to the spare, /dev/null goes on 0 and 1; the
    // temporary output then takes 2 and has nowhere to go.
    do {
      try RNCryptor.encryptFile(at: input, to: directory + "/sealed", password: "pw")
      return .codecDidNotFail
    } catch RNCryptor.Error.file(_, _, let code) where code == EMFILE {
    } catch {
      return .codecFailedOtherwise
    }
    // The engine: 2 and the spare are free; the spare is taken, and a new file then takes 2.
    let held = open("/dev/null", O_RDONLY)
    let spareAgain = open("/dev/null", O_RDONLY)
    guard held == 2, spareAgain > 2 else { return .setUpFailed }
    close(held)
    let created = directory + "/00000001.seg.tmp"
    do {
      _ = try PosixFileSystem().open(created, mode: .createNew)
      return .engineDidNotFail
    } catch CaskError.io(_, _, let code) where code == EMFILE {
    } catch {
      return .engineFailedOtherwise
    }
    close(spareAgain)
    for descriptor in fillers.dropLast() where descriptor > 2 { close(descriptor) }
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return .setUpFailed }
    if names.contains(where: { $0.hasSuffix(".partial") }) { return .codecLeftItsFile }
    if names.contains("00000001.seg.tmp") { return .engineLeftItsFile }
    return .cleanFailures
  }
}
