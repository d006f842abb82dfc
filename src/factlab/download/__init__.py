"""Download stage: every manifest file, mirror first, sha256-verified, into results/download/."""
