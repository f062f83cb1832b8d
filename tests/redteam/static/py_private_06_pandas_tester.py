# family: private-api — pandas' private test runner imports and runs pytest
import pandas as pd
pd.util._tester.test(extra_args=["--pyargs", "x"])
