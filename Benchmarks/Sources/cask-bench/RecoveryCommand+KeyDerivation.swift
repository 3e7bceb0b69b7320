import CaskEngine
import Foundation

extension RecoveryCommand {
  /// What the header's key derivation adds to every open of a password store: an empty store
  /// opened read-only `runs` times with each derivation, so that the figure is the derivation
  /// and nothing else. It is also what one offline guess of the password costs on this machine
  /// (Docs/SECURITY.md, section 2).
  static func measureKeyDerivation(in directory: String, runs: Int) throws -> [TimedRuns] {
    let derivations: [(String, CaskStore.KeyDerivation)] = [
      ("scrypt N=2^15 r=8 p=1 (default)", .standard), ("rncryptor (PBKDF2, 2 x 10,000)", .rncryptor),
    ]
    return try derivations.enumerated().map { index, item in
      let (label, derivation) = item
      let path = "\(directory)/kdf-\(index).cask"
      var options = CaskStore.Options(durability: .never, autoCompaction: nil)
      options.keyDerivation = derivation
      try CaskStore(path: path, password: "bench password", options: options).close()
      options.readOnly = true
      printToStandardError("recovery: \(runs) opens of an empty store, \(derivation.name) header")
      let times = try (0..<runs).map { _ in
        try Stopwatch.seconds { try CaskStore(path: path, password: "bench password", options: options).close() }
      }
      return TimedRuns(name: label, seconds: times)
    }
  }
}
