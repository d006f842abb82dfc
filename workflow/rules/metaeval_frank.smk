# Meta-evaluation: rebuilt published analyses (frank). See README.
FRANK_OUTPUTS = []
