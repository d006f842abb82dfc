# Meta-evaluation: rebuilt published analyses (published). See README.
PUBLISHED_OUTPUTS = []
