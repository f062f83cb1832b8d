let 
cf