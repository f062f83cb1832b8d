# -*- coding: utf-8 -*-
import json
print(json.dumps({"a": 1}))
